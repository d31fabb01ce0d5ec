-- Workflow health (seed 002 § Workflow Health, Phase 3): what the health page, /metrics and
-- `charter doctor` show — and the stuck detector with its three ways out.

-- Instances of the org running with nothing queued, leased or waited for, and no progress
-- for p_minutes: no pending document event, no wait (timer, event, delivery, approval,
-- handler task, retry), no undelivered side effect, no ready node.
CREATE OR REPLACE FUNCTION charter.stuck_instances(p_org_id text, p_minutes integer DEFAULT 10)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('runId', i.id, 'documentId', i.document_id, 'entityType', i.entity_type,
                              'currentNodes', to_jsonb(i.current_nodes), 'updatedAt', i.updated_at,
                              'idleSeconds', extract(epoch FROM now() - i.updated_at)::float8)
      FROM charter.workflow_instances AS i
     WHERE i.org_id = charter._acting_org(p_org_id) AND i.status = 'running'
       AND i.updated_at < now() - make_interval(mins => greatest(coalesce(p_minutes, 10), 0))
       AND NOT EXISTS (SELECT 1 FROM charter.document_events AS e
                        WHERE e.org_id = i.org_id AND e.document_id = i.document_id
                          AND e.status IN ('pending', 'processing', 'failed'))
       AND NOT EXISTS (SELECT 1 FROM charter.instance_waits AS w WHERE w.run_id = i.id AND w.org_id = i.org_id)
       AND NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                        WHERE x.run_id = i.id AND x.org_id = i.org_id
                          AND x.status IN ('pending', 'processing', 'failed'))
     ORDER BY i.updated_at
$$;

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
        'stepLatencyP95Ms', (SELECT (percentile_cont(0.95) WITHIN GROUP (
                                         ORDER BY extract(epoch FROM s.finished_at - s.started_at)) * 1000)::float8
                               FROM charter.step_executions AS s
                              WHERE s.org_id = o.org AND s.finished_at > now() - interval '1 hour'
                                AND s.started_at IS NOT NULL AND s.status = 'completed'
                                AND s.step_slug NOT LIKE '$%'),
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
        'stuck', (SELECT coalesce(jsonb_agg(s), '[]'::jsonb) FROM charter.stuck_instances(o.org, p_stuck_minutes) AS s))
      FROM (SELECT charter._acting_org(p_org_id) AS org) AS o
$$;

-- A stuck instance, run again: a retry wait due now makes the engine drain it (ready nodes
-- run, a gate it reached passes). Recorded as evidence with who asked.
CREATE OR REPLACE FUNCTION charter.nudge_instance(p_org_id text, p_run_id text, p_actor text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = charter._acting_org(p_org_id);
    IF NOT FOUND OR v_instance.status <> 'running' THEN
        RETURN false;
    END IF;
    -- The engine's lock order: the document first.
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_instance.org_id || '/' || v_instance.document_id));
    PERFORM charter._node_evidence(v_instance, '$instance', 'nudge', 't' || v_instance.epoch, 'completed',
        jsonb_build_object('nudged', true, 'by', coalesce(p_actor, session_user::text)), NULL, NULL);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (p_run_id, '$retry', v_instance.org_id, 't' || v_instance.epoch, 'retry', v_instance.document_version, now())
    ON CONFLICT (run_id, node_id, org_id) DO UPDATE SET due_at = now();
    PERFORM pg_notify('charter_events', v_instance.org_id);
    RETURN true;
END;
$$;

-- The admin's last resort for a stuck instance: failed with STUCK_FORCE_FAILED, its pending
-- work cancelled with evidence; `retry_run` can take it up again later.
CREATE OR REPLACE FUNCTION charter.force_fail_instance(p_org_id text, p_run_id text, p_reason text,
                                                       p_actor text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = charter._acting_org(p_org_id);
    IF NOT FOUND OR v_instance.status NOT IN ('running', 'paused') THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_instance.org_id || '/' || v_instance.document_id));
    -- Under the lock: a paused instance is not stuck, it waits for an operator (and paused
    -- may become only running or cancelled).
    IF (SELECT i.status FROM charter.workflow_instances AS i
         WHERE i.id = p_run_id AND i.org_id = v_instance.org_id) = 'paused' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Instance %L is paused, so it is not stuck: it waits for an operator', p_run_id),
            HINT = 'Resume it (client.documents.resume), or cancel it (client.cancel).';
    END IF;
    PERFORM charter._finish_instance(p_run_id, v_instance.org_id, 'failed', jsonb_build_object(
        'code', 'STUCK_FORCE_FAILED', 'sqlstate', 'CH064',
        'message', format('Failed by %s: %s', coalesce(p_actor, session_user::text),
                          coalesce(nullif(p_reason, ''), 'stuck')),
        'hint', 'retry_run takes it up again from the nodes that were active.'),
        coalesce(nullif(p_reason, ''), 'stuck'));
    RETURN true;
END;
$$;

-- The projection of the org's instance, rebuilt from its evidence (WF-15).
CREATE OR REPLACE FUNCTION charter.rebuild_instance(p_org_id text, p_run_id text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                    WHERE i.id = p_run_id AND i.org_id = charter._acting_org(p_org_id)) THEN
        RETURN false;
    END IF;
    PERFORM charter.rebuild_instance_projection(p_run_id, charter._acting_org(p_org_id));
    RETURN true;
END;
$$;

-- Counts for /metrics: the org's runs by flow and status, documents by type and state, and
-- how long its steps took in the last hour by flow and node type (Prometheus buckets).
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
                                   GROUP BY 1, 2) AS s))
      FROM (SELECT charter._acting_org(p_org_id) AS org) AS o
$$;
