-- Workflow health (seed 002 § Workflow Health, Phase 3): what the health page, /metrics and
-- `charter doctor` show — the stuck detector with its three ways out, and what is waiting.

-- Stuck means something that should be moving is not (each entry says why, `reason`):
--   task_overdue       a handler task (or a flow task) ready and not claimed, or claimed past
--                      its lease, for p_minutes: no worker runs it;
--   node_not_run       a node ready (or running with nothing to wait for) that the engine
--                      has not run, the instance idle for p_minutes;
--   event_not_applied  a document event in the outbox not applied within p_minutes;
--   timer_overdue      a timer, a retry or an approval's escalation due p_minutes ago and not
--                      fired;
--   timeout_overdue    an event wait's timeout passed p_minutes ago and not fired;
--   delivery_overdue   a side effect of the instance p_minutes past its retry time (or lease);
--   approval_undecidable  a pending approval request none of whose approvers may decide it
--                      (left the directory, left out by segregation of duties — say a
--                      delegation to its requester — or an empty role); no grace;
--   nothing_pending    running, idle p_minutes, with nothing pending at all, and not at a
--                      state waiting for a transition.
-- Waiting for a person, an event or a timer not yet due is not stuck (waiting_instances).
-- One entry per instance (or flow run): its first reason, and all of them.

-- A pending request's approvers who may not decide it now, as {user: why}: not in the
-- org's directory, left out by segregation of duties, or decided already.
CREATE OR REPLACE FUNCTION charter._approvers_unable(p_request charter.approval_requests)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
-- (PL/pgSQL, not SQL, for a plan kept per session: it runs once per pending request.)
DECLARE
    v_excluded jsonb;
BEGIN
    v_excluded := charter._approval_exclusions(p_request.org_id, p_request.document_id, p_request.entity_version,
                      p_request.requester, p_request.run_id, p_request.node_id, p_request.token, p_request.config)
                  || CASE WHEN p_request.requester IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object(p_request.requester, 'requester') END;
    RETURN (
        SELECT coalesce(jsonb_object_agg(a.who, CASE
                   WHEN u.user_id IS NULL THEN 'not in the directory'
                   WHEN v_excluded ? a.who THEN v_excluded->>a.who
                   ELSE 'decided' END), '{}'::jsonb)
          FROM unnest(p_request.approvers) AS a(who)
          LEFT JOIN charter.directory_users AS u ON u.org_id = p_request.org_id AND u.user_id = a.who
         WHERE u.user_id IS NULL OR v_excluded ? a.who
            OR EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                        WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id AND d.actor = a.who));
END;
$$;

-- The lifecycle states (nodes of type lifecycle_state) of some workflow versions, with the
-- state each stands for: where an instance rests, waiting for a transition.
CREATE OR REPLACE FUNCTION charter._lifecycle_states(p_version_ids text[])
RETURNS TABLE (version_id text, slug text, state text)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT v.id, n.key, n.value #>> '{config,state}'
      FROM charter.workflow_versions AS v
     CROSS JOIN LATERAL jsonb_each(v.compiled->'nodes') AS n
     WHERE v.id = ANY (p_version_ids) AND n.value->>'type' = 'lifecycle_state'
$$;

-- The waits of the org's instances that are not stuck (p_stuck: the run ids that are), begun
-- at p_before or earlier: waiting_instances' rows.
CREATE OR REPLACE FUNCTION charter._waiting_rows(p_org text, p_before timestamptz, p_stuck text[])
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    WITH live AS (
        SELECT i.id, i.org_id, i.document_id, i.entity_type, i.status, i.updated_at, i.version_id
          FROM charter.workflow_instances AS i
         WHERE i.org_id = p_org AND i.status IN ('running', 'paused') AND NOT i.id = ANY (coalesce(p_stuck, '{}'))
    ), states AS (
        SELECT * FROM charter._lifecycle_states(ARRAY(SELECT DISTINCT i.version_id FROM live AS i))
    ), waits AS (
        SELECT i.id AS run_id, i.document_id, i.entity_type, i.status,
               CASE w.kind WHEN 'handler' THEN 'task' ELSE w.kind END AS kind,
               w.node_id AS node, w.created_at AS since, w.due_at,
               w.detail || jsonb_strip_nulls(jsonb_build_object('eventKey', w.event_key, 'lastError', w.last_error)) AS detail
          FROM live AS i
          JOIN charter.instance_waits AS w ON w.org_id = i.org_id AND w.run_id = i.id
         WHERE i.status = 'running'
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, i.status, 'transition', s.step_slug,
               coalesce(s.ready_at, i.updated_at), NULL::timestamptz, jsonb_build_object('state', l.state)
          FROM live AS i
          JOIN charter.step_states AS s ON s.org_id = i.org_id AND s.run_id = i.id
          JOIN states AS l ON l.version_id = i.version_id AND l.slug = s.step_slug
         WHERE i.status = 'running' AND s.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM charter.step_states AS b
                            WHERE b.org_id = i.org_id AND b.run_id = i.id AND b.status IN ('ready', 'running')
                              AND NOT EXISTS (SELECT 1 FROM states AS m
                                               WHERE m.version_id = i.version_id AND m.slug = b.step_slug))
        UNION ALL
        SELECT i.id, i.document_id, i.entity_type, i.status, 'operator', NULL, i.updated_at, NULL, '{}'::jsonb
          FROM live AS i WHERE i.status = 'paused'
    )
    SELECT jsonb_build_object('runId', w.run_id, 'documentId', w.document_id, 'entityType', w.entity_type,
                              'status', w.status, 'kind', w.kind, 'node', w.node, 'since', w.since, 'dueAt', w.due_at,
                              'waitingSeconds', greatest(extract(epoch FROM now() - w.since)::float8, 0),
                              'detail', w.detail)
      FROM waits AS w
     WHERE w.since <= p_before
     ORDER BY w.kind, w.since, w.run_id, w.node
$$;

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
          CROSS JOIN LATERAL (SELECT charter._approvers_unable(r) AS unable) AS n
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

-- What the org's instances wait for that is not trouble: one row per wait of an instance
-- that is not stuck (stuck_instances, p_stuck_minutes), begun at least p_hours ago. kind:
--   approval    a person decides an approval request;
--   transition  a person moves the document on (it rests at a state, its gates ahead);
--   event       an inbound event (its timeout, if any, not passed);
--   timer       a timer, or an approval's escalation deadline, not yet due;
--   delivery    a side effect being delivered, or in backoff before its next try;
--   task        a Python action (handler task) queued or running within its lease;
--   retry       a node's retry in backoff;
--   operator    the instance is paused: an operator resumes it.
CREATE OR REPLACE FUNCTION charter.waiting_instances(p_org_id text, p_hours numeric DEFAULT 0,
                                                     p_stuck_minutes integer DEFAULT 10)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT w FROM (SELECT charter._acting_org(p_org_id) AS org) AS o,
           charter._waiting_rows(o.org, now() - make_interval(secs => greatest(coalesce(p_hours, 0), 0) * 3600),
                                 ARRAY(SELECT s->>'runId' FROM charter.stuck_instances(o.org, p_stuck_minutes) AS s
                                        WHERE s->>'runId' IS NOT NULL)) AS w
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
        -- Work only; waits for people, events, timers and receivers by kind (0904_figures.sql).
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
