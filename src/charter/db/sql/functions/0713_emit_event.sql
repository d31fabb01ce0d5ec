-- Writes one event to the outbox unless an event with its key was ever written (WF-11):
-- the receipt is the dedup gate. mutate() writes its own event and receipt in the
-- statement that records its change (its key is always new).
CREATE OR REPLACE FUNCTION charter._emit_event(
    p_org_id text, p_document_id text, p_entity_type text, p_version integer,
    p_event_type text, p_payload jsonb, p_trace_id text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_key text := charter._event_key(p_document_id, p_event_type, p_version);
BEGIN
    INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
    VALUES (p_org_id, 'events', v_key) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO charter.document_events (
        org_id, document_id, entity_type, entity_version, event_type, payload,
        idempotency_key, trace_id)
    VALUES (p_org_id, p_document_id, p_entity_type, p_version, p_event_type, p_payload,
            v_key, p_trace_id);
    PERFORM charter._wake_engine(p_org_id);
    RETURN true;
END;
$$;
