CREATE OR REPLACE FUNCTION charter._dead_letters_for_update(p_org_id text, p_ids bigint[])
RETURNS SETOF charter.side_effects
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_missing bigint;
BEGIN
    SELECT i INTO v_missing FROM unnest(p_ids) AS i
     WHERE NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                        WHERE x.org_id = p_org_id AND x.id = i AND x.status = 'dead_letter'
                          AND x.kind = 'effect')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH061',
            MESSAGE = format('Side effect %s is not a dead letter of org %L', v_missing, p_org_id),
            HINT = 'charter dlq list shows the dead letters; nothing was changed.';
    END IF;
    RETURN QUERY SELECT * FROM charter.side_effects AS x
                  WHERE x.org_id = p_org_id AND x.id = ANY (p_ids) ORDER BY x.id FOR UPDATE;
END;
$$;
