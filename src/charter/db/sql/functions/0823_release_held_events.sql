-- The document's events held while its instance was paused (pending, due at infinity: see
-- _apply_event) are due again now.
CREATE OR REPLACE FUNCTION charter._release_held_events(p_org_id text, p_document_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.document_events AS e SET next_retry_at = now(), error = NULL
     WHERE e.org_id = p_org_id AND e.document_id = p_document_id
       AND e.status = 'pending' AND e.next_retry_at = 'infinity';
END;
$$;
