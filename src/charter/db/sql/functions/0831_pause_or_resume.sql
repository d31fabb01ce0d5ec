-- pause_instance (p_pause) and resume_instance (NOT p_pause): one flip of the document's
-- instance between running and paused, with what each direction holds back or releases,
-- an evidence row and an audit row. An instance already in the state asked for is left as
-- it is. Returns the document.
CREATE OR REPLACE FUNCTION charter._pause_or_resume(
    p_org_id text, p_document_id text, p_actor text, p_reason text, p_pause boolean)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_action   text := CASE WHEN p_pause THEN 'pause' ELSE 'resume' END;
    v_from     text := CASE WHEN p_pause THEN 'running' ELSE 'paused' END;
    v_to       text := CASE WHEN p_pause THEN 'paused' ELSE 'running' END;
    v_org      text := charter._acting_org(p_org_id);
    v_document charter.documents := charter._instance_act_document(v_org, p_document_id, p_actor);
    v_instance charter.workflow_instances := charter._paused_or_running_instance(v_org, v_document.id, v_action);
BEGIN
    IF v_instance.status = v_from THEN
        UPDATE charter.workflow_instances AS i SET status = v_to, updated_at = now()
         WHERE i.id = v_instance.id AND i.org_id = v_org;
        IF p_pause THEN
            UPDATE charter.side_effects AS x SET next_retry_at = 'infinity'
             WHERE x.run_id = v_instance.id AND x.org_id = v_org AND x.status IN ('pending', 'failed');
        ELSE
            PERFORM charter._release_held_events(v_org, v_document.id);
            UPDATE charter.side_effects AS x SET next_retry_at = now()
             WHERE x.run_id = v_instance.id AND x.org_id = v_org AND x.status IN ('pending', 'failed')
               AND x.next_retry_at = 'infinity';
            PERFORM pg_notify('charter_events', v_org);
        END IF;
        PERFORM charter._node_evidence(v_instance, '$instance', v_action, 't' || v_instance.epoch, 'completed',
            jsonb_build_object(CASE WHEN p_pause THEN 'paused' ELSE 'resumed' END, true,
                               'by', p_actor, 'reason', p_reason),
            NULL, p_actor);
        PERFORM charter._instance_audit(v_document, 'instance.' || v_action, p_actor, p_reason,
            jsonb_build_object('runId', v_instance.id, 'from', v_from, 'to', v_to));
    END IF;
    RETURN charter.get_document(v_org, v_document.id);
END;
$$;
