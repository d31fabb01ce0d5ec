CREATE OR REPLACE FUNCTION charter.drop_side_effects(p_org_id text, p_ids bigint[], p_actor text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org  text := charter._acting_org(p_org_id);
    v_done bigint[];
BEGIN
    IF coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN '{}';
    END IF;
    PERFORM charter._dead_letters_for_update(v_org, p_ids);
    WITH dropped AS (
        UPDATE charter.side_effects AS x
           SET status = 'cancelled',
               interventions = x.interventions || jsonb_build_object(
                   'action', 'drop', 'by', p_actor, 'at', now(), 'lastError', x.error, 'attempts', x.attempts)
         WHERE x.org_id = v_org AND x.id = ANY (p_ids) AND x.status = 'dead_letter'
        RETURNING x.id
    )
    SELECT coalesce(array_agg(d.id ORDER BY d.id), '{}') INTO v_done FROM dropped AS d;
    RETURN v_done;
END;
$$;
