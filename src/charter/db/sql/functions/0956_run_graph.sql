-- A run's graph for the dashboard: its compiled workflow (flow or document workflow) and
-- each node's state and token; NULL when the run is not the org's.
CREATE OR REPLACE FUNCTION charter.run_graph(p_org_id text, p_run_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
               'runId', r.id, 'status', r.status, 'compiled', v.compiled,
               'nodes', coalesce((SELECT jsonb_object_agg(s.step_slug, jsonb_build_object('status', s.status,
                                                                                          'token', s.token))
                                    FROM charter._step_states_of(ROW(r.*)::charter.runs) AS s), '{}'::jsonb))
      FROM charter.runs AS r JOIN charter.workflow_versions AS v ON v.id = r.version_id
     WHERE r.id = p_run_id AND r.org_id = charter._acting_org(p_org_id)
$$;
