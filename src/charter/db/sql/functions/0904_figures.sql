-- Figures that mean what they say: a node that waits for a person, an event, a timer or a
-- receiver is not slow work. Its time is reported as a wait, by what it waited for, and
-- never counted in the step latency (health_report, /metrics, `charter doctor`).

-- What a node of this type waits for, or NULL for a node that works (the engine's own
-- nodes, a Python action handler): 'approval' (approvers decide), 'transition' (a lifecycle
-- state rests until someone moves the document on), 'timer', 'event', 'delivery' (a webhook
-- or notification until its receiver confirms it, retries included).
CREATE OR REPLACE FUNCTION charter._wait_kind(p_node_type text)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE p_node_type
        WHEN 'approval' THEN 'approval'
        WHEN 'lifecycle_state' THEN 'transition'
        WHEN 'wait_timer' THEN 'timer'
        WHEN 'wait_event' THEN 'event'
        WHEN 'webhook_out' THEN 'delivery'
        WHEN 'notification' THEN 'delivery'
    END
$$;

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

-- How many nodes the engine finished in this transaction (completed, failed, skipped or
-- cancelled: charter._node_evidence counts them), for the worker's own figures: it reads
-- them back in the statement that applied its events or resumed its waits.
CREATE OR REPLACE FUNCTION charter._count_nodes_run(p_nodes integer)
RETURNS void
LANGUAGE sql
SET search_path = ''
AS $$
    SELECT set_config('charter.nodes_run',
                      (coalesce(nullif(current_setting('charter.nodes_run', true), ''), '0')::bigint
                       + p_nodes)::text, true)
$$;
