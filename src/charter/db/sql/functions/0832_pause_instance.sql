-- client.documents.pause: the document's running workflow instance is paused and runs
-- nothing until resumed. Under the document's lock (the engine's order), so what the engine
-- was doing with it has finished. Its waits stay (fire_due_waits passes them by; due ones
-- fire on resume), its events are held as the engine meets them (_apply_event), its handler
-- tasks are not claimed, its side effects not yet handed to delivery wait (due at infinity),
-- and a user's transition of the document is refused with WORKFLOW_PAUSED. An evidence row
-- and an audit row name who paused it and why. Pausing a paused instance changes nothing; a
-- document without a running instance is RUN_STATE_INVALID. Returns the document.
CREATE OR REPLACE FUNCTION charter.pause_instance(
    p_org_id text, p_document_id text, p_actor text, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
RETURN charter._pause_or_resume(p_org_id, p_document_id, p_actor, p_reason, true);
