-- The lifecycle states (nodes of type lifecycle_state) of some workflow versions, with the
-- state each stands for: where an instance rests, waiting for a transition.
CREATE OR REPLACE FUNCTION charter._lifecycle_states(p_version_ids text[])
RETURNS TABLE (version_id text, slug text, state text)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT v.id, n.key, n.value #>> '{config,state}'
      FROM charter.workflow_versions AS v
     CROSS JOIN LATERAL jsonb_each(v.compiled->'nodes') AS n
     WHERE v.id = ANY (p_version_ids) AND n.value->>'type' = 'lifecycle_state'
$$;
