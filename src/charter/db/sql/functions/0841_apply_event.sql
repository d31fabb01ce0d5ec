-- Applies one event to its document's instance under the document's lock (WF-01): on_create
-- starts the instance (unless the document was amended meanwhile); an event the instance already reflects (its own changes) changes
-- nothing; a user's transition moves the token through the gate; an edit in a stable region
-- is version drift (WF-05). Then every ready node runs. An event for a paused instance is
-- held: back to pending, due at infinity, its attempt given back — and, the oldest of its
-- document, it holds the later ones back too — until resume (or the instance's end) lets
-- it go (_release_held_events).
CREATE OR REPLACE FUNCTION charter._apply_event(p_event charter.document_events, p_verified text[], p_refused jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document charter.documents;
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_actor    text := p_event.payload->>'actor';
    v_run      text;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_event.org_id || '/' || p_event.document_id));
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = p_event.org_id AND d.id = p_event.document_id FOR UPDATE;
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.org_id = p_event.org_id AND i.document_id = p_event.document_id AND i.status IN ('running', 'paused');
    IF p_event.event_type = 'on_create' THEN
        -- A document amended before its instance began never gets one: its amendment runs.
        IF v_instance.id IS NULL AND v_document.amended_by IS NULL AND NOT EXISTS (
                SELECT 1 FROM charter.workflow_instances AS i
                 WHERE i.org_id = p_event.org_id AND i.entity_type = p_event.entity_type
                   AND i.document_id = p_event.document_id) THEN
            v_run := charter._start_instance(v_document, p_event, p_verified, p_refused);
            PERFORM charter._drain(v_run, p_event.org_id);
        END IF;
        RETURN;
    END IF;
    IF v_instance.id IS NULL OR p_event.entity_version <= v_instance.document_version
       OR p_event.event_type = 'on_amended' THEN
        RETURN;
    END IF;
    IF v_instance.status = 'paused' THEN
        UPDATE charter.document_events AS e
           SET status = 'pending', attempts = greatest(e.attempts - 1, 0), worker_id = NULL,
               next_retry_at = 'infinity', error = format('held: workflow instance %s is paused', v_instance.id)
         WHERE e.created_at = p_event.created_at AND e.id = p_event.id AND e.org_id = p_event.org_id;
        RETURN;
    END IF;
    v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
    IF p_event.event_type = 'on_lifecycle_transition' THEN
        UPDATE charter.workflow_instances AS i
           SET document_version = p_event.entity_version,
               actor = CASE WHEN v_actor = 'system' OR v_actor LIKE 'service:%' THEN i.actor ELSE v_actor END
         WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id RETURNING * INTO v_instance;
        PERFORM charter._user_transition(v_instance, v_wf, p_event);
    ELSE
        PERFORM charter._version_drift(v_instance, v_wf, v_document, p_event);
    END IF;
    PERFORM charter._drain(v_instance.id, v_instance.org_id);
END;
$$;
