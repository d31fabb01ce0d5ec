-- Reading an instance: the document's workflow (run, status, current nodes, what it waits
-- for, whether anything is runnable), and WF-15's projection derived from evidence alone.

-- What a document's instance waits for: a transition (a state's gates), an approval, an
-- event, a timer, a delivery or a handler task; with detail, and since when it waits.
CREATE OR REPLACE FUNCTION charter._waiting_for(p_run text, p_org_id text, p_wf jsonb)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_agg(x.item ORDER BY x.node), '[]'::jsonb) FROM (
        SELECT w.node_id AS node, jsonb_build_object(
                   'kind', CASE w.kind WHEN 'handler' THEN 'task' ELSE w.kind END, 'node', w.node_id, 'since', w.created_at,
                   'detail', w.detail || jsonb_strip_nulls(jsonb_build_object('eventKey', w.event_key, 'dueAt', w.due_at,
                                                                              'lastError', w.last_error))) AS item
          FROM charter.instance_waits AS w WHERE w.run_id = p_run AND w.org_id = p_org_id
        UNION ALL
        SELECT s.step_slug, jsonb_build_object('kind', 'transition', 'node', s.step_slug, 'since', s.ready_at,
                                               'detail', jsonb_build_object(
                   'state', p_wf #>> ARRAY['nodes', s.step_slug, 'config', 'state'],
                   'gates', (SELECT coalesce(jsonb_agg(p_wf #>> ARRAY['nodes', o.edge->>'target', 'config', 'gate'] ORDER BY o.n), '[]')
                               FROM charter._out_edges(p_wf, s.step_slug) AS o
                              WHERE p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'lifecycle_gate')))
          FROM charter.step_states AS s
         WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status = 'running'
           AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'lifecycle_state'
           AND NOT EXISTS (SELECT 1 FROM charter.step_states AS b
                            WHERE b.run_id = p_run AND b.org_id = p_org_id AND b.status IN ('ready', 'running')
                              AND p_wf #>> ARRAY['nodes', b.step_slug, 'type'] NOT IN ('lifecycle_state'))
    ) AS x
$$;
