-- An operator's act on a document's workflow instance (cancel, pause, resume, restart)
-- starts here: the document, locked as the engine locks it (WF-01: the document's lock, then
-- its row), so whatever the engine was doing with its instance has finished.
-- DOCUMENT_NOT_FOUND for an id the org does not have; an actor is required (it is named in
-- the audit row).
CREATE OR REPLACE FUNCTION charter._instance_act_document(p_org_id text, p_document_id text, p_actor text)
RETURNS charter.documents
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document charter.documents;
BEGIN
    IF p_actor IS NULL OR length(p_actor) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = 'Acting on a document''s workflow needs an actor (who does it, 1 to 200 characters)',
            HINT = 'Pass actor=, e.g. the operator''s user id; it is recorded in the audit row.';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_org_id || '/' || p_document_id));
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = p_org_id AND d.id = p_document_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, p_org_id),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    RETURN v_document;
END;
$$;
