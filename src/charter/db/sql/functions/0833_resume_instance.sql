-- client.documents.resume: a paused instance runs again. Its held events and side effects
-- are due now, its waits that fell due meanwhile fire at the engine's next look (woken
-- here), and its handler tasks may be claimed again. An evidence row and an audit row name
-- who resumed it and why. Resuming a running instance changes nothing; a document without
-- a running or paused instance is RUN_STATE_INVALID. Returns the document.
CREATE OR REPLACE FUNCTION charter.resume_instance(
    p_org_id text, p_document_id text, p_actor text, p_reason text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_document charter.documents := charter._instance_act_document(v_org, p_document_id, p_actor);
    v_instance charter.workflow_instances := charter._paused_or_running_instance(v_org, v_document.id, 'resume');
BEGIN
    IF v_instance.status = 'paused' THEN
        UPDATE charter.workflow_instances AS i SET status = 'running', updated_at = now()
         WHERE i.id = v_instance.id AND i.org_id = v_org;
        PERFORM charter._release_held_events(v_org, v_document.id);
        UPDATE charter.side_effects AS x SET next_retry_at = now()
         WHERE x.run_id = v_instance.id AND x.org_id = v_org AND x.status IN ('pending', 'failed')
           AND x.next_retry_at = 'infinity';
        PERFORM charter._node_evidence(v_instance, '$instance', 'resume', 't' || v_instance.epoch, 'completed',
            jsonb_build_object('resumed', true, 'by', p_actor, 'reason', p_reason), NULL, p_actor);
        PERFORM charter._instance_audit(v_document, 'instance.resume', p_actor, p_reason,
            jsonb_build_object('runId', v_instance.id, 'from', 'paused', 'to', 'running'));
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    RETURN charter.get_document(v_org, v_document.id);
END;
$$;
