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
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_document charter.documents := charter._instance_act_document(v_org, p_document_id, p_actor);
    v_instance charter.workflow_instances := charter._paused_or_running_instance(v_org, v_document.id, 'pause');
BEGIN
    IF v_instance.status = 'running' THEN
        UPDATE charter.workflow_instances AS i SET status = 'paused', updated_at = now()
         WHERE i.id = v_instance.id AND i.org_id = v_org;
        UPDATE charter.side_effects AS x SET next_retry_at = 'infinity'
         WHERE x.run_id = v_instance.id AND x.org_id = v_org AND x.status IN ('pending', 'failed');
        PERFORM charter._node_evidence(v_instance, '$instance', 'pause', 't' || v_instance.epoch, 'completed',
            jsonb_build_object('paused', true, 'by', p_actor, 'reason', p_reason), NULL, p_actor);
        PERFORM charter._instance_audit(v_document, 'instance.pause', p_actor, p_reason,
            jsonb_build_object('runId', v_instance.id, 'from', 'running', 'to', 'paused'));
    END IF;
    RETURN charter.get_document(v_org, v_document.id);
END;
$$;
