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
