-- Counts for /metrics: the org's runs by flow and status, documents by type and state, and
-- how long its steps took in the last hour by flow and node type (Prometheus buckets; nodes
-- that wait are left out: health_report's waitLatencyP95Ms reports them).
CREATE OR REPLACE FUNCTION charter.metrics_counts(p_org_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'runs', (SELECT coalesce(jsonb_agg(jsonb_build_object('flow', r.workflow_slug, 'status', r.status,
                                                              'count', r.n)), '[]'::jsonb)
                   FROM (SELECT r.workflow_slug, r.status, count(*) AS n FROM charter.runs AS r
                          WHERE r.org_id = o.org GROUP BY 1, 2) AS r),
        'retries', jsonb_build_object(
            'steps', (SELECT count(*) FROM charter.step_executions AS e
                       WHERE e.org_id = o.org AND e.status = 'failed' AND NOT e.terminal
                         AND e.finished_at > now() - interval '1 hour'),
            'sideEffects', (SELECT coalesce(sum(greatest(x.attempts - 1, 0)), 0) FROM charter.side_effects AS x
                             WHERE x.org_id = o.org AND x.created_at > now() - interval '1 hour')),
        'documents', (SELECT coalesce(jsonb_agg(jsonb_build_object('entityType', d.entity_type, 'state', d.state,
                                                                   'count', d.n)), '[]'::jsonb)
                        FROM (SELECT d.entity_type, d.state, count(*) AS n FROM charter.documents AS d
                               WHERE d.org_id = o.org GROUP BY 1, 2) AS d),
        'stepDurations', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                     'flow', s.flow, 'nodeType', s.node_type, 'count', s.n, 'sum', s.total,
                                     'buckets', s.buckets)), '[]'::jsonb)
                            FROM (SELECT r.workflow_slug AS flow, coalesce(e.node_type, 'step') AS node_type,
                                         count(*) AS n,
                                         sum(extract(epoch FROM e.finished_at - e.started_at))::float8 AS total,
                                         jsonb_build_array(
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '5 ms'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '25 ms'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '100 ms'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '500 ms'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '2 s'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '10 s'),
                                             count(*) FILTER (WHERE e.finished_at - e.started_at <= interval '60 s'))
                                             AS buckets
                                    FROM charter.step_executions AS e
                                    JOIN charter.runs AS r ON r.id = e.run_id AND r.org_id = e.org_id
                                   WHERE e.org_id = o.org AND e.finished_at > now() - interval '1 hour'
                                     AND e.started_at IS NOT NULL AND e.step_slug NOT LIKE '$%'
                                     AND e.status IN ('completed', 'failed')
                                     AND charter._wait_kind(e.node_type) IS NULL
                                   GROUP BY 1, 2) AS s))
      FROM (SELECT charter._acting_org(p_org_id) AS org) AS o
$$;
