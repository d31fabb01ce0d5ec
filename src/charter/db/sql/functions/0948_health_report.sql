-- The health figures of one org (and the workers and flow queues every org shares).
CREATE OR REPLACE FUNCTION charter.health_report(p_org_id text, p_stuck_minutes integer DEFAULT 10)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'orgId', o.org,
        'workersAlive', (SELECT count(*) FROM charter.workers AS w
                          WHERE w.stopped_at IS NULL
                            AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)),
        -- The org's own flow tasks only (queue_stats() is every org's, for the owner).
        'flowQueues', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                               'flow', q.workflow_slug, 'versionId', q.version_id, 'version', v.version,
                               'ready', q.ready, 'scheduled', q.scheduled, 'running', q.running,
                               'oldestReadySeconds', q.oldest_ready_seconds,
                               'servingWorkers', (SELECT count(*) FROM charter.workers AS w
                                                   WHERE q.version_id = ANY (w.versions) AND w.stopped_at IS NULL
                                                     AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)))
                               ORDER BY q.workflow_slug, v.version), '[]'::jsonb)
                         FROM (SELECT t.workflow_slug, t.version_id,
                                      count(*) FILTER (WHERE t.status = 'queued' AND t.available_at <= now()) AS ready,
                                      count(*) FILTER (WHERE t.status = 'queued' AND t.available_at > now()) AS scheduled,
                                      count(*) FILTER (WHERE t.status = 'started') AS running,
                                      extract(epoch FROM now() - min(t.available_at)
                                              FILTER (WHERE t.status = 'queued' AND t.available_at <= now()))::float8
                                          AS oldest_ready_seconds
                                 FROM charter.tasks AS t
                                WHERE t.status IN ('queued', 'started') AND t.org_id = o.org
                                  AND t.available_at IS NOT NULL  -- the claim index's condition
                                GROUP BY t.workflow_slug, t.version_id) AS q
                         JOIN charter.workflow_versions AS v ON v.id = q.version_id),
        'documentEvents', (SELECT jsonb_build_object(
                'pending', count(*) FILTER (WHERE e.status IN ('pending', 'failed')),
                'processing', count(*) FILTER (WHERE e.status = 'processing'),
                'stuckProcessing', count(*) FILTER (WHERE e.status = 'processing' AND e.next_retry_at < now()),
                'deadLetters', count(*) FILTER (WHERE e.status = 'dead_letter'),
                'oldestPendingSeconds', extract(epoch FROM now() - min(e.created_at)
                                                FILTER (WHERE e.status IN ('pending', 'failed')))::float8)
              FROM charter.document_events AS e
             WHERE e.org_id = o.org AND e.status IN ('pending', 'failed', 'processing', 'dead_letter')),
        'sideEffects', (SELECT jsonb_build_object(
                'pending', count(*) FILTER (WHERE x.status IN ('pending', 'failed')),
                'processing', count(*) FILTER (WHERE x.status = 'processing'),
                'stuckProcessing', count(*) FILTER (WHERE x.status = 'processing' AND x.next_retry_at < now()),
                'deadLetters', count(*) FILTER (WHERE x.status = 'dead_letter' AND x.kind = 'effect'),
                -- Of those, notifications on a channel no worker could send (CHANNEL_NOT_CONFIGURED).
                'channelNotConfigured', count(*) FILTER (WHERE x.status = 'dead_letter' AND x.kind = 'effect'
                                                           AND x.error LIKE 'CHANNEL\_NOT\_CONFIGURED:%'),
                'oldestPendingSeconds', extract(epoch FROM now() - min(x.created_at)
                                                FILTER (WHERE x.status IN ('pending', 'failed')))::float8)
              FROM charter.side_effects AS x
             WHERE x.org_id = o.org AND x.status IN ('pending', 'failed', 'processing', 'dead_letter')),
        'instances', (SELECT jsonb_build_object(
                'running', count(*) FILTER (WHERE i.status = 'running'),
                'failed', count(*) FILTER (WHERE i.status = 'failed'))
              FROM charter.workflow_instances AS i
             WHERE i.org_id = o.org AND i.status IN ('running', 'failed')),
        -- Work only; waits for people, events, timers and receivers by kind (0939_wait_kind.sql).
        'stepLatencyP95Ms', charter._step_latency_p95(o.org),
        'waitLatencyP95Ms', charter._wait_latency_p95(o.org),
        -- The latest failed instances (20), each with why: the node and its error, e.g. an
        -- approval nobody may decide (APPROVERS_EMPTY, CH051). The index on (org, status,
        -- updated_at) reads them newest first.
        'failures', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                             'runId', f.id, 'documentId', f.document_id, 'entityType', f.entity_type,
                             'node', f.error->>'node', 'code', f.error->>'code', 'sqlstate', f.error->>'sqlstate',
                             'message', f.error->>'message', 'failedAt', f.completed_at)
                             ORDER BY f.updated_at DESC, f.id), '[]'::jsonb)
                       FROM (SELECT i.* FROM charter.workflow_instances AS i
                              WHERE i.org_id = o.org AND i.status = 'failed'
                              ORDER BY i.updated_at DESC LIMIT 20) AS f),
        'stuckMinutes', coalesce(p_stuck_minutes, 10),
        'stuck', st.entries,
        -- Instances waiting (not stuck), and how many wait for each kind of thing (one
        -- instance may wait for several, say an approval and an event on parallel branches).
        'waiting', (WITH w AS (SELECT x->>'runId' AS run_id, x->>'kind' AS kind
                                 FROM charter._waiting_rows(o.org, now(), ARRAY(
                                          SELECT e->>'runId' FROM jsonb_array_elements(st.entries) AS e
                                           WHERE e->>'runId' IS NOT NULL)) AS x)
                    SELECT jsonb_build_object(
                        'instances', (SELECT count(DISTINCT w.run_id) FROM w),
                        'byKind', coalesce((SELECT jsonb_object_agg(k.kind, k.n) FROM (
                                                SELECT w.kind, count(DISTINCT w.run_id) AS n FROM w GROUP BY 1) AS k),
                                           '{}'::jsonb))),
        -- Dead letters of both outboxes: document events and side effects (not tasks).
        'deadLetters', (SELECT count(*) FROM charter.document_events AS e
                         WHERE e.org_id = o.org AND e.status = 'dead_letter')
                     + (SELECT count(*) FROM charter.side_effects AS x
                         WHERE x.org_id = o.org AND x.status = 'dead_letter' AND x.kind = 'effect'))
      FROM (SELECT charter._acting_org(p_org_id) AS org) AS o,
           LATERAL (SELECT coalesce(jsonb_agg(s), '[]'::jsonb) AS entries
                      FROM charter.stuck_instances(o.org, p_stuck_minutes) AS s) AS st
$$;
