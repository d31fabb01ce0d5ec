-- Waits resume here: timers when their time comes, events when one arrives (or their
-- timeout passes), deliveries when the side-effects worker confirms them. The claim below
-- is the scheduler: a wait's due_at is when it may resume, indexed, taken with SKIP LOCKED.

-- Resumes up to p_limit due waits, each in its own subtransaction. Locks are taken in the
-- engine's one order — the document's lock, then the document row, then its waits — and a
-- document another transaction holds is left for the next call (try-lock: never waited on).
-- Pollers read the same due rows, so one that finds the first p_limit held by another goes
-- on to those after them: the loop reads as it goes and stops once it has taken p_limit. The
-- read's LIMIT, ten times p_limit, keeps its plan an ordered index scan (planned for every
-- due wait, it could sort them all on every call) and lets a poller pass what nine others hold.
-- A paused instance's waits do not fire: they stay, and fire once it is resumed if due.
CREATE OR REPLACE FUNCTION charter.fire_due_waits(
    p_limit integer, p_verified text[], p_refused jsonb DEFAULT '{}', p_worker_id text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_candidate record;
    v_wait      charter.instance_waits;
    v_fired     integer := 0;
    v_message   text;
    v_served    text[] := charter._served_orgs();  -- a worker given its orgs fires theirs
    v_taken     integer := 0;
BEGIN
    FOR v_candidate IN SELECT w.run_id, w.node_id, w.org_id, i.org_id || '/' || i.document_id AS doc
                         FROM charter.instance_waits AS w
                         JOIN charter.workflow_instances AS i ON i.id = w.run_id AND i.org_id = w.org_id
                        WHERE w.due_at <= charter._now_at_most() AND w.due_at <= charter._now(w.org_id) AND (w.kind <> 'handler' OR w.resume IS NOT NULL)
                          AND i.status = 'running'
                          AND (v_served IS NULL OR array_position(v_served, w.org_id) IS NOT NULL)
                        ORDER BY w.due_at LIMIT p_limit * 10 LOOP
        EXIT WHEN v_taken >= p_limit;
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(charter._lock_key('document', v_candidate.doc));
        SELECT * INTO v_wait FROM charter.instance_waits AS w
         WHERE w.run_id = v_candidate.run_id AND w.org_id = v_candidate.org_id
           AND w.node_id = v_candidate.node_id AND w.due_at <= charter._now(v_candidate.org_id)
         FOR UPDATE;
        CONTINUE WHEN NOT FOUND;  -- resumed or withdrawn meanwhile
        v_taken := v_taken + 1;
        BEGIN
            PERFORM charter._resume_wait(v_wait, p_verified, p_refused);
            v_fired := v_fired + 1;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            UPDATE charter.instance_waits AS w
               SET attempts = w.attempts + 1, last_error = v_message, worker_id = p_worker_id,
                   due_at = now() + make_interval(secs => least(300, 0.5 * power(2, w.attempts)))
             WHERE w.run_id = v_wait.run_id AND w.org_id = v_wait.org_id AND w.node_id = v_wait.node_id;
        END;
    END LOOP;
    RETURN v_fired;
END;
$$;

-- One wait resumes: its node completes along the edges its outcome picks, then the
-- instance runs on. A wait whose node is no longer running is simply dropped; a paused
-- instance's wait is left as it is (paused since the poller read it).
CREATE OR REPLACE FUNCTION charter._resume_wait(p_wait charter.instance_waits, p_verified text[], p_refused jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_status   text;
    v_chosen   text[];
    v_output   jsonb;
    v_outcome  text;
    v_resume   jsonb := coalesce(p_wait.resume, '{}'::jsonb);
    v_version  integer;
    v_result   jsonb;
    v_state    text;
    v_message  text;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_wait.run_id AND i.org_id = p_wait.org_id;
    PERFORM 1 FROM charter.documents AS d
     WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id FOR UPDATE;
    IF v_instance.status = 'paused' THEN
        RETURN;
    END IF;
    IF p_wait.kind = 'retry' THEN
        DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_wait.run_id AND w.org_id = p_wait.org_id AND w.node_id = p_wait.node_id;
        v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
        PERFORM charter._catch_up(v_instance, v_wf);
        PERFORM charter._drain(v_instance.id, v_instance.org_id);
        RETURN;
    END IF;
    SELECT s.status INTO v_status FROM charter.step_states AS s
     WHERE s.run_id = p_wait.run_id AND s.org_id = p_wait.org_id AND s.step_slug = p_wait.node_id;
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_wait.run_id AND w.org_id = p_wait.org_id AND w.node_id = p_wait.node_id;
    IF v_instance.status <> 'running' OR v_status IS DISTINCT FROM 'running' THEN
        RETURN;
    END IF;
    v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
    CASE p_wait.kind
    WHEN 'timer' THEN
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := jsonb_build_object('firedAt', charter._now(v_instance.org_id), 'dueAt', p_wait.detail->'until');
    WHEN 'event' THEN
        IF v_resume ? 'event' THEN
            v_chosen := charter._forward_edges(v_wf, p_wait.node_id, 'timeout');
            v_output := jsonb_build_object('event', v_resume->'event');
            UPDATE charter.workflow_instances AS i
               SET context = i.context || jsonb_build_object('event', v_resume #> '{event,payload}')
             WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id RETURNING * INTO v_instance;
        ELSE
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o WHERE o.edge->>'label' = 'timeout';
            IF cardinality(v_chosen) = 0 THEN
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', 'CH049', 'node', p_wait.node_id,
                    'message', format('No event %L arrived before the timeout at %s, and %s has no edge labelled timeout',
                                      p_wait.event_key, p_wait.timeout_at, p_wait.node_id)));
                RETURN;
            END IF;
            v_output := jsonb_build_object('timedOut', true, 'eventKey', p_wait.event_key, 'timeoutAt', p_wait.timeout_at);
            v_outcome := 'timeout';
        END IF;
    WHEN 'delivery' THEN
        IF v_resume ? 'failed' THEN
            -- Dead-lettered: the node's `failed` edge, else the instance fails.
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o WHERE o.edge->>'label' = 'failed';
            IF cardinality(v_chosen) = 0 THEN
                -- A destination the webhook policy refused fails it with that code (CH105),
                -- a channel no worker can send with CHANNEL_NOT_CONFIGURED (CH125).
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', CASE WHEN v_resume #>> '{failed,error}' LIKE 'WEBHOOK\_DESTINATION\_DENIED:%'
                                     THEN 'CH105'
                                     WHEN v_resume #>> '{failed,error}' LIKE 'CHANNEL\_NOT\_CONFIGURED:%'
                                     THEN 'CH125' ELSE 'CH059' END,
                    'node', p_wait.node_id,
                    'message', format('Delivery of %s failed for good after %s attempts: %s', p_wait.node_id,
                                      v_resume #>> '{failed,attempts}', v_resume #>> '{failed,error}'),
                    'delivery', v_resume->'failed'));
                RETURN;
            END IF;
            v_output := jsonb_build_object('deliveryFailed', v_resume->'failed');
        ELSE
            v_chosen := charter._forward_edges(v_wf, p_wait.node_id, 'failed');
            v_output := jsonb_build_object('delivery', v_resume->'delivery');
        END IF;
    WHEN 'approval' THEN
        IF v_resume ? 'error' THEN
            -- A chain's next stage had nobody who may decide it (APPROVERS_EMPTY).
            PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, v_resume->'error');
            RETURN;
        END IF;
        IF NOT (v_resume ? 'outcome') THEN
            -- Its escalateAfter passed undecided: escalate, and wait on.
            PERFORM charter._escalate_approval(v_instance, p_wait);
            RETURN;
        END IF;
        v_outcome := v_resume->>'outcome';
        SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
          FROM charter._out_edges(v_wf, p_wait.node_id) AS o
         WHERE o.edge->>'label' = v_outcome;
        IF cardinality(v_chosen) = 0 THEN
            -- No edge for this outcome: it travels with the token (a rejection reaches the
            -- gate, which then takes its reject transition).
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o
             WHERE o.edge->>'label' IS NULL OR o.edge->>'label' NOT IN ('approved', 'rejected');
            v_outcome := CASE WHEN v_outcome = 'rejected' THEN 'reject' ELSE v_outcome END;
        END IF;
        v_output := jsonb_build_object('approval', v_resume);
    WHEN 'handler' THEN
        IF v_resume ? 'error' THEN
            PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, v_resume->'error' || jsonb_build_object(
                'node', p_wait.node_id, 'actionType', p_wait.detail->>'actionType', 'attempts', p_wait.attempts));
            RETURN;
        END IF;
        SELECT d.version INTO v_version FROM charter.documents AS d
         WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
        IF v_version <> v_instance.document_version THEN
            -- The document has changes the instance has not seen: apply the patch after them.
            RAISE EXCEPTION 'document % changed meanwhile; the action result waits for its events',
                v_instance.document_id;
        END IF;
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := jsonb_build_object('handler', jsonb_build_object(
            'actionType', p_wait.detail->>'actionType', 'patch', v_resume->'patch', 'attempts', p_wait.attempts));
        IF v_resume->'patch' <> '{}'::jsonb THEN
            BEGIN
                v_result := charter.mutate(v_instance.org_id, p_wait.detail->>'actionType', v_instance.document_id,
                    v_resume->'patch', coalesce(p_wait.detail->>'runAs', 'system'),
                    p_reason => format('workflow action at %s', p_wait.node_id), p_trace_id => v_instance.trace_id,
                    p_via => 'workflow', p_node_id => p_wait.node_id);
            EXCEPTION WHEN others THEN
                GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
                IF v_state NOT LIKE 'CH%' THEN
                    RAISE;
                END IF;
                -- The document refuses the patch (a field, a policy): the node fails, for good.
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', v_state, 'message', v_message, 'node', p_wait.node_id,
                    'actionType', p_wait.detail->>'actionType', 'patch', v_resume->'patch'));
                RETURN;
            END;
            UPDATE charter.workflow_instances AS i SET document_version = (v_result->>'version')::integer
             WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id;
            v_output := v_output || jsonb_build_object('mutation', jsonb_build_object('version', v_result->'version'));
        END IF;
    ELSE
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := v_resume;
    END CASE;
    PERFORM charter._complete_node(v_instance, v_wf, p_wait.node_id, v_chosen, v_output,
                                   v_resume->>'actor', v_outcome);
    PERFORM charter._drain(v_instance.id, v_instance.org_id);
END;
$$;

-- client.events.send: records an inbound event (idempotent on its event id) and resumes the
-- waits on its key, documents' wait_event nodes and flows' wait_event steps alike; with none waiting it is kept until p_retention passes, for the first
-- wait_event on that key to start.
-- p_document_id names the document the event is for: then only that document's waits take
-- it, now or kept (flow steps never do), so an event for an amended original never resumes
-- its amendment, which waits on the same key. An event naming no document is kept for any
-- wait on its key except an amendment made after it was sent: it was sent for a document of
-- that time (docs/architecture.md, Amendments).
CREATE OR REPLACE FUNCTION charter.send_event(
    p_org_id text, p_key text, p_payload jsonb DEFAULT NULL, p_event_id text DEFAULT NULL,
    p_retention interval DEFAULT interval '7 days', p_document_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_id      text := coalesce(nullif(p_event_id, ''), gen_random_uuid()::text);
    v_matched integer;
    v_flow    text;
BEGIN
    IF p_key IS NULL OR length(p_key) NOT BETWEEN 1 AND 500 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH044',
            MESSAGE = 'An event needs a key of 1 to 500 characters, e.g. delivery:pod:SHIP-1',
            HINT = 'Send the key the wait_event node renders from its eventKey template.';
    END IF;
    IF length(v_id) > 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH044', MESSAGE = 'An event id has at most 200 characters',
            HINT = 'Use the sender''s own id for the event, e.g. a webhook delivery id.';
    END IF;
    IF p_document_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM charter.documents AS d WHERE d.org_id = v_org AND d.id = p_document_id) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Event %L names document %L, which does not exist in org %L', p_key, p_document_id, v_org),
            HINT = 'Name the document the event is for (its id), or none to resume any wait on the key.';
    END IF;
    PERFORM charter._check_payload(p_payload, 'event payload');
    -- A wait being written on this key right now is committed before we look for waits (and
    -- it sees this event if we are first): see the wait_event node.
    PERFORM pg_advisory_xact_lock(charter._lock_key('event', v_org || '/' || p_key));
    INSERT INTO charter.inbound_events (org_id, event_id, event_key, payload, expires_at, document_id)
    VALUES (v_org, v_id, p_key, p_payload, charter._now(v_org) + p_retention, p_document_id)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('eventId', v_id, 'status', 'duplicate', 'matched', 0);
    END IF;
    WITH waiting AS (
        SELECT w.run_id, w.node_id FROM charter.instance_waits AS w
         WHERE w.org_id = v_org AND w.event_key = p_key AND w.kind = 'event' AND w.resume IS NULL
           AND (p_document_id IS NULL OR EXISTS (
                   SELECT 1 FROM charter.workflow_instances AS i
                    WHERE i.id = w.run_id AND i.org_id = w.org_id AND i.document_id = p_document_id))
           -- An amendment's data, and so its keys, repeat its original's: it takes only an
           -- event that names it, so one meant for the original never completes it.
           AND (p_document_id IS NOT NULL OR NOT EXISTS (
                   SELECT 1 FROM charter.workflow_instances AS i
                     JOIN charter.documents AS d ON d.org_id = i.org_id AND d.id = i.document_id
                    WHERE i.id = w.run_id AND i.org_id = w.org_id AND d.amended_from IS NOT NULL))
         ORDER BY w.created_at
         FOR UPDATE OF w
    ), resumed AS (
        UPDATE charter.instance_waits AS w
           SET resume = jsonb_build_object('event', jsonb_build_object('id', v_id, 'key', p_key, 'payload', p_payload)),
               due_at = now()
          FROM waiting
         WHERE w.run_id = waiting.run_id AND w.node_id = waiting.node_id AND w.org_id = v_org
        RETURNING w.run_id
    )
    SELECT count(*) INTO v_matched FROM resumed;
    -- Flow steps waiting on the key (wait_event): the event is attached and the task is
    -- claimable now. Only a task still queued: one a worker already claimed at its timeout
    -- has timed out.
    WITH waiting AS (
        SELECT w.run_id, w.step_slug, w.task_index, t.id AS task_id
          FROM charter.flow_event_waits AS w
          JOIN charter.tasks AS t ON t.run_id = w.run_id AND t.step_slug = w.step_slug
                                 AND t.task_index = w.task_index AND t.org_id = w.org_id
         WHERE w.org_id = v_org AND w.event_key = p_key AND w.event IS NULL AND t.status = 'queued'
           AND p_document_id IS NULL  -- an event for a document is not a flow's
         ORDER BY w.created_at
           FOR UPDATE OF w, t
    ), attached AS (
        UPDATE charter.flow_event_waits AS w
           SET event = jsonb_build_object('id', v_id, 'key', p_key, 'payload', p_payload)
          FROM waiting
         WHERE w.run_id = waiting.run_id AND w.step_slug = waiting.step_slug
           AND w.task_index = waiting.task_index AND w.org_id = v_org
        RETURNING waiting.task_id
    ), woken AS (
        UPDATE charter.tasks AS t SET available_at = now()
          FROM attached WHERE t.id = attached.task_id AND t.org_id = v_org
        RETURNING t.workflow_slug
    )
    SELECT v_matched + count(*), (SELECT min(workflow_slug) FROM woken)
      INTO v_matched, v_flow FROM woken;
    IF v_flow IS NOT NULL THEN
        PERFORM pg_notify('charter_tasks', v_flow);
    END IF;
    IF v_matched > 0 THEN
        UPDATE charter.inbound_events AS e SET consumed_at = now(), consumed_by = 'waits'
         WHERE e.org_id = v_org AND e.event_id = v_id;
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    RETURN jsonb_build_object('eventId', v_id, 'status', CASE WHEN v_matched > 0 THEN 'delivered' ELSE 'kept' END,
                              'matched', v_matched);
END;
$$;

-- What the side-effects worker calls once an effect is delivered: the effect is completed
-- with its response, and its node resumes. p_org_id is the effect's org (looked up by id
-- when null).
CREATE OR REPLACE FUNCTION charter.confirm_side_effect(
    p_effect_id bigint, p_response jsonb DEFAULT '{}', p_org_id text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_effect charter.side_effects;
BEGIN
    SELECT * INTO v_effect FROM charter.side_effects AS x
     WHERE x.id = p_effect_id AND x.org_id = charter._effect_org(p_effect_id, p_org_id);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    RETURN charter._confirm_effect(v_effect, p_response);
END;
$$;

-- confirm_side_effect for a row already read (finish_side_effect has it): written by its
-- whole key, so in its own partition.
CREATE OR REPLACE FUNCTION charter._confirm_effect(p_effect charter.side_effects, p_response jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_effect charter.side_effects;
BEGIN
    -- Delivered: through processing (the state machine's only way to completed).
    UPDATE charter.side_effects AS x SET status = 'processing', attempts = x.attempts + 1
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
       AND x.status IN ('pending', 'failed');
    UPDATE charter.side_effects AS x
       SET status = 'completed', completed_at = now(), response = p_response
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
       AND x.status = 'processing'
    RETURNING * INTO v_effect;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- The wait of this effect only (a re-driven effect may outlive its node's round). What
    -- the receiver said in its body stays with the effect, for admins: not in the instance.
    UPDATE charter.instance_waits AS w
       SET resume = jsonb_build_object('delivery', jsonb_build_object('effectId', v_effect.id,
                                                                      'response', p_response - 'body')),
           due_at = now()
     WHERE w.run_id = v_effect.run_id AND w.org_id = v_effect.org_id AND w.node_id = v_effect.node_id AND w.kind = 'delivery'
       AND w.detail->>'idempotencyKey' = v_effect.idempotency_key;
    PERFORM pg_notify('charter_events', v_effect.org_id);
    RETURN true;
END;
$$;

-- retry_run for a document's failed instance (the admin's explicit, recorded way out of
-- failed): the node that failed and the nodes its failure cancelled are ready again, as a
-- new round (fresh tokens, so fresh receipts), a $instance evidence row records who retried
-- what, and a retry wait has the engine run them. An instance that failed because its
-- node's effect dead-lettered (DELIVERY_FAILED) re-drives that same effect instead (same
-- row, same idempotency key: _redrive_effect), never a second one. Under the document's
-- lock (after the run's), the order re-drives take it in: one of them at a time, and the
-- instance read again under it.
CREATE OR REPLACE FUNCTION charter._retry_instance(p_run_id text, p_org_id text, p_actor text)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_nodes    text[];
    v_effect   charter.side_effects;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = p_org_id;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_org_id || '/' || v_instance.document_id));
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = p_org_id FOR UPDATE;
    IF v_instance.status <> 'failed' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is %s; only a failed run can be retried', p_run_id, v_instance.status),
            HINT = 'It was taken up meanwhile (retried, or its dead letter re-driven).';
    END IF;
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                WHERE i.org_id = p_org_id AND i.document_id = v_instance.document_id
                  AND i.status IN ('running', 'paused')) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L cannot be retried: document %L was restarted and has an active workflow instance',
                             p_run_id, v_instance.document_id),
            HINT = 'A document has one active instance; cancel the active one first if this one should go on.';
    END IF;
    IF v_instance.error #>> '{delivery,effectId}' ~ '^[0-9]+$' THEN
        SELECT * INTO v_effect FROM charter.side_effects AS x
         WHERE x.org_id = p_org_id AND x.id = (v_instance.error #>> '{delivery,effectId}')::bigint
           AND x.run_id = p_run_id
           FOR UPDATE;
        IF FOUND AND charter._failed_on_effect(v_instance, v_effect) THEN
            PERFORM charter._redrive_effect(v_effect, p_actor, 'retry_run');
            RETURN 'running';
        END IF;
    END IF;
    SELECT array_agg(s.step_slug ORDER BY s.step_slug) INTO v_nodes FROM charter.step_states AS s
     WHERE s.run_id = p_run_id AND s.org_id = p_org_id
       AND (s.status = 'failed' OR (s.status = 'cancelled' AND s.completed_at >= v_instance.completed_at));
    PERFORM set_config('charter.admin_override', 'on', true);
    UPDATE charter.workflow_instances AS i
       SET status = 'running', error = NULL, completed_at = NULL, epoch = i.epoch + 1, updated_at = now()
     WHERE i.id = p_run_id AND i.org_id = p_org_id RETURNING * INTO v_instance;
    PERFORM set_config('charter.admin_override', '', true);
    UPDATE charter.runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now()
     WHERE id = p_run_id AND org_id = p_org_id;
    UPDATE charter.step_states AS s
       SET status = 'ready', completed_at = NULL, ready_at = clock_timestamp(),
           token = regexp_replace(coalesce(s.token, 't1'), '^t[0-9]+', 't' || v_instance.epoch)
     WHERE s.run_id = p_run_id AND s.org_id = p_org_id AND s.step_slug = ANY (coalesce(v_nodes, '{}'));
    PERFORM charter._node_evidence(v_instance, '$instance', 'retry', 't' || v_instance.epoch, 'completed',
        jsonb_build_object('retry', to_jsonb(coalesce(v_nodes, '{}')), 'epoch', v_instance.epoch,
                           'by', p_actor), NULL, p_actor);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (p_run_id, '$retry', v_instance.org_id, 't' || v_instance.epoch, 'retry', v_instance.document_version, now())
    ON CONFLICT (run_id, node_id, org_id) DO UPDATE SET due_at = now();
    PERFORM charter._instance_projection(p_run_id, p_org_id);
    PERFORM pg_notify('charter_events', v_instance.org_id);
    RETURN 'running';
END;
$$;

-- An admin's way back for the events outbox: dead-lettered events of a document (or of the
-- org) go back to pending with fresh attempts; the error column keeps who did it and what
-- the error was. Returns how many.
CREATE OR REPLACE FUNCTION charter.retry_dead_letters(p_org_id text, p_document_id text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org   text := charter._acting_org(p_org_id);
    v_count integer;
BEGIN
    UPDATE charter.document_events AS e
       SET status = 'pending', attempts = 0, next_retry_at = now(), worker_id = NULL,
           error = format('retried by %s at %s; was: %s', session_user, now(), e.error)
     WHERE e.org_id = v_org AND e.status = 'dead_letter'
       AND (p_document_id IS NULL OR e.document_id = p_document_id);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM pg_notify('charter_events', v_org);
    RETURN v_count;
END;
$$;

-- A retried instance whose document changed while it was failed (those events found no
-- active instance and changed nothing): the change is version drift like any other (WF-05).
CREATE OR REPLACE FUNCTION charter._catch_up(p_instance charter.workflow_instances, p_wf jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document charter.documents;
    v_event    charter.document_events;
BEGIN
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = p_instance.org_id AND d.id = p_instance.document_id;
    IF v_document.version = p_instance.document_version
       OR EXISTS (SELECT 1 FROM charter.document_events AS e
                   WHERE e.org_id = p_instance.org_id AND e.document_id = p_instance.document_id
                     AND e.status IN ('pending', 'processing', 'failed')) THEN
        RETURN;  -- nothing missed, or its events are still to come
    END IF;
    SELECT * INTO v_event FROM charter.document_events AS e
     WHERE e.org_id = p_instance.org_id AND e.document_id = p_instance.document_id
       AND e.entity_version = v_document.version
     ORDER BY e.id LIMIT 1;
    PERFORM charter._version_drift(p_instance, p_wf, v_document, v_event);
END;
$$;
