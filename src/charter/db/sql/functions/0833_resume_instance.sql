-- client.documents.resume: a paused instance runs again. Its held events and side effects
-- are due now, its waits that fell due meanwhile fire at the engine's next look (woken
-- here), and its handler tasks may be claimed again. An evidence row and an audit row name
-- who resumed it and why. Resuming a running instance changes nothing; a document without
-- a running or paused instance is RUN_STATE_INVALID. Returns the document.
CREATE OR REPLACE FUNCTION charter.resume_instance(
    p_org_id text, p_document_id text, p_actor text, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
RETURN charter._pause_or_resume(p_org_id, p_document_id, p_actor, p_reason, false);
