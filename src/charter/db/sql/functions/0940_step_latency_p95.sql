-- The 95th percentile, in milliseconds, of the org's completed steps and nodes of the last
-- hour that did work (flow steps, handlers, the engine's nodes): waits are left out.
CREATE OR REPLACE FUNCTION charter._step_latency_p95(p_org_id text)
RETURNS float8
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT (percentile_cont(0.95) WITHIN GROUP (
                ORDER BY extract(epoch FROM s.finished_at - s.started_at)) * 1000)::float8
      FROM charter.step_executions AS s
     WHERE s.org_id = p_org_id AND s.finished_at > now() - interval '1 hour'
       AND s.started_at IS NOT NULL AND s.status = 'completed'
       AND s.step_slug NOT LIKE '$%' AND charter._wait_kind(s.node_type) IS NULL
$$;
