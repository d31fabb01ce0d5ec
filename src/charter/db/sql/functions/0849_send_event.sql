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
