-- The 95th percentile, in milliseconds, of the org's waits that ended in the last hour, by
-- what they waited for: {"approval": 5400000.0, "timer": 4012.5}; a kind with none is left out.
CREATE OR REPLACE FUNCTION charter._wait_latency_p95(p_org_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_object_agg(w.kind, w.p95 ORDER BY w.kind), '{}'::jsonb)
      FROM (SELECT charter._wait_kind(s.node_type) AS kind,
                   (percentile_cont(0.95) WITHIN GROUP (
                        ORDER BY extract(epoch FROM s.finished_at - s.started_at)) * 1000)::float8 AS p95
              FROM charter.step_executions AS s
             WHERE s.org_id = p_org_id AND s.finished_at > now() - interval '1 hour'
               AND s.started_at IS NOT NULL AND s.status = 'completed'
               AND s.step_slug NOT LIKE '$%' AND charter._wait_kind(s.node_type) IS NOT NULL
             GROUP BY 1) AS w
$$;
