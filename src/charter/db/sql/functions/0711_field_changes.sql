-- The changes as {field: {"from": old, "to": new}}, for versions and the audit trail.
CREATE OR REPLACE FUNCTION charter._field_changes(p_old jsonb, p_new jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_object_agg(k, jsonb_build_object('from', p_old->k, 'to', p_new->k)), '{}'::jsonb)
              FROM (SELECT jsonb_object_keys(coalesce(p_old, '{}'::jsonb) || coalesce(p_new, '{}'::jsonb)) AS k) AS keys
             WHERE (p_old->k) IS DISTINCT FROM (p_new->k));
END;
$$;
