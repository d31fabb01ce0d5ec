-- What a flow holds, for confirming a deletion: its versions and its runs by status; null
-- when the flow does not exist.
CREATE OR REPLACE FUNCTION charter.flow_summary(p_flow_slug text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'flow', w.slug,
        'versions', (SELECT count(*) FROM charter.workflow_versions AS v WHERE v.workflow_slug = w.slug),
        'runs', (SELECT count(*) FROM charter.runs AS r WHERE r.workflow_slug = w.slug),
        'runsByStatus', coalesce((SELECT jsonb_object_agg(s.status, s.n) FROM (
            SELECT r.status, count(*) AS n FROM charter.runs AS r
             WHERE r.workflow_slug = w.slug GROUP BY r.status) AS s), '{}'::jsonb))
      FROM charter.workflows AS w
     WHERE w.slug = p_flow_slug
$$;
