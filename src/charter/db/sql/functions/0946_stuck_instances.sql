CREATE OR REPLACE FUNCTION charter.stuck_instances(p_org_id text, p_minutes integer DEFAULT 10)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH o AS (
        SELECT charter._acting_org(p_org_id) AS org, charter._now(charter._acting_org(p_org_id)) AS clock,
               make_interval(mins => greatest(coalesce(p_minutes, 10), 0)) AS grace
    ), live AS (
        SELECT i.id, i.org_id, i.document_id, i.entity_type, i.updated_at, i.current_nodes, i.version_id
          FROM o, charter.workflow_instances AS i
         WHERE i.org_id = o.org AND i.status = 'running'
    ), states AS (  -- the lifecycle states of the versions they run, read once per version
        SELECT * FROM charter._lifecycle_states(ARRAY(SELECT DISTINCT i.version_id FROM live AS i))
    ), unapplied AS (  -- the org's documents with an event not applied yet (not one held for a pause)
        SELECT e.document_id, e.entity_type, min(e.created_at) AS since, count(*) AS n,
               (array_agg(e.error ORDER BY e.created_at) FILTER (WHERE e.error IS NOT NULL))[1] AS error
          FROM o, charter.document_events AS e
         WHERE e.org_id = o.org AND e.status IN ('pending', 'processing', 'failed') AND e.next_retry_at <> 'infinity'
         GROUP BY e.document_id, e.entity_type
    ), reasons AS (
        -- Handler tasks not claimed, or claimed past their lease.
        SELECT i.id AS run_id, i.document_id, i.entity_type, 1 AS rank,
               CASE WHEN w.kind = 'handler' AND w.resume IS NULL THEN 'task_overdue'
                    WHEN w.kind = 'event' THEN 'timeout_overdue' ELSE 'timer_overdue' END AS reason,
               w.node_id AS node, w.due_at AS since,
               jsonb_strip_nulls(jsonb_build_object('waitKind', CASE w.kind WHEN 'handler' THEN 'task' ELSE w.kind END,
                   'dueAt', w.due_at, 'claimed', CASE WHEN w.kind = 'handler' AND w.resume IS NULL THEN w.worker_id IS NOT NULL END,
                   'workerId', w.worker_id, 'attempts', w.attempts, 'lastError', w.last_error,
                   'actionType', w.detail->>'actionType', 'eventKey', w.event_key)) AS detail
          FROM o, live AS i
          JOIN charter.instance_waits AS w ON w.org_id = i.org_id AND w.run_id = i.id
         WHERE w.due_at < o.clock - o.grace
        UNION ALL
        -- Flow tasks ready and not claimed (none held back by a limit), or claimed past their lease.
        SELECT t.run_id, NULL, NULL, 1, 'task_overdue', t.step_slug, t.available_at,
               jsonb_strip_nulls(jsonb_build_object('flow', t.workflow_slug, 'claimed', t.status = 'started',
                   'workerId', t.worker_id, 'attempts', t.attempts))
          FROM o, charter.tasks AS t
         WHERE t.org_id = o.org AND t.status IN ('queued', 'started') AND t.available_at IS NOT NULL
           AND t.available_at < now() - o.grace
           AND (t.status = 'started' OR (t.limit_key IS NULL AND t.rate_key IS NULL))
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, 2, 'node_not_run', s.step_slug, coalesce(s.ready_at, i.updated_at),
               jsonb_build_object('status', s.status)
          FROM o, live AS i
          JOIN charter.step_states AS s ON s.org_id = i.org_id AND s.run_id = i.id
         WHERE i.updated_at < now() - o.grace
           AND (s.status = 'ready'
                OR (s.status = 'running'
                    AND NOT EXISTS (SELECT 1 FROM states AS l WHERE l.version_id = i.version_id AND l.slug = s.step_slug)
                    AND NOT EXISTS (SELECT 1 FROM charter.instance_waits AS w
                                     WHERE w.org_id = i.org_id AND w.run_id = i.id AND w.node_id = s.step_slug)))
           AND NOT EXISTS (SELECT 1 FROM unapplied AS u WHERE u.document_id = i.document_id)
        UNION ALL
        SELECT (SELECT i.id FROM charter.workflow_instances AS i
                 WHERE i.org_id = o.org AND i.document_id = u.document_id AND i.status = 'running'),
               u.document_id, u.entity_type, 3,
               'event_not_applied', NULL, u.since, jsonb_strip_nulls(jsonb_build_object('events', u.n, 'error', u.error))
          FROM o, unapplied AS u
         WHERE u.since < now() - o.grace
           AND NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS p
                            WHERE p.org_id = o.org AND p.document_id = u.document_id AND p.status = 'paused')
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, 4, 'delivery_overdue', x.node_id, x.next_retry_at,
               jsonb_strip_nulls(jsonb_build_object('sideEffectId', x.id, 'effectType', x.effect_type, 'status', x.status,
                                                    'attempts', x.attempts, 'error', x.error))
          FROM o, live AS i
          JOIN charter.side_effects AS x ON x.org_id = i.org_id AND x.run_id = i.id
         WHERE x.status IN ('pending', 'processing', 'failed') AND x.next_retry_at < now() - o.grace
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, 5, 'approval_undecidable', r.node_id, r.created_at,
               jsonb_build_object('requestId', r.id, 'decision', r.decision, 'approvers', to_jsonb(r.approvers),
                                  'unable', n.unable)
          FROM o, live AS i
          JOIN charter.approval_requests AS r ON r.org_id = i.org_id AND r.run_id = i.id AND r.status = 'pending'
          CROSS JOIN LATERAL (SELECT charter._approvers_unable(ROW(r.*)::charter.approval_requests) AS unable) AS n
         WHERE CASE WHEN r.decision = 'all'
                    -- every approver must decide: one who may not, and has not, holds it for ever
                    THEN EXISTS (SELECT 1 FROM jsonb_each_text(n.unable) AS e WHERE e.value <> 'decided')
                    ELSE NOT EXISTS (SELECT 1 FROM unnest(r.approvers) AS a WHERE NOT n.unable ? a) END
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, 6, 'nothing_pending', NULL, i.updated_at, '{}'::jsonb
          FROM o, live AS i
         WHERE i.updated_at < now() - o.grace
           AND NOT EXISTS (SELECT 1 FROM unapplied AS u WHERE u.document_id = i.document_id)
           AND NOT EXISTS (SELECT 1 FROM charter.instance_waits AS w WHERE w.org_id = i.org_id AND w.run_id = i.id)
           AND NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                            WHERE x.org_id = i.org_id AND x.run_id = i.id AND x.status IN ('pending', 'processing', 'failed'))
           AND NOT EXISTS (SELECT 1 FROM charter.step_states AS s
                            WHERE s.org_id = i.org_id AND s.run_id = i.id AND s.status IN ('ready', 'running'))
    )
    SELECT jsonb_build_object(
               'runId', r.run_id, 'documentId', r.document_id, 'entityType', r.entity_type,
               'kind', CASE WHEN r.document_id IS NULL THEN 'flow' ELSE 'instance' END,
               'reason', (array_agg(r.reason ORDER BY r.rank, r.since))[1],
               'reasons', jsonb_agg(jsonb_build_object('reason', r.reason, 'node', r.node, 'since', r.since,
                                                       'detail', r.detail) ORDER BY r.rank, r.since),
               'currentNodes', coalesce(to_jsonb(i.current_nodes),
                                        jsonb_agg(DISTINCT r.node) FILTER (WHERE r.node IS NOT NULL), '[]'::jsonb),
               'updatedAt', coalesce(i.updated_at, min(r.since)),
               'since', min(r.since),
               'idleSeconds', greatest(extract(epoch FROM now() - coalesce(i.updated_at, min(r.since)))::float8, 0))
      FROM o CROSS JOIN reasons AS r
      LEFT JOIN charter.workflow_instances AS i
        ON i.org_id = o.org AND i.id = r.run_id AND i.document_id = r.document_id
     GROUP BY r.run_id, r.document_id, r.entity_type, i.id, i.org_id
     ORDER BY min(r.since), r.run_id
$$;
