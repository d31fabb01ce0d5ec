-- Ends an instance (completed, failed or cancelled) and its run, withdrawing what is left.
-- A paused instance's held events are let go (with no instance they change nothing).
CREATE OR REPLACE FUNCTION charter._finish_instance(
    p_run text, p_org_id text, p_status text, p_error jsonb, p_reason text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_wf       jsonb;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
    IF v_instance.status NOT IN ('running', 'paused') THEN
        RETURN;
    END IF;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    PERFORM charter._cancel_active(v_instance, v_wf, '{}',
        jsonb_build_object('reason', coalesce(p_reason, 'the instance ' || p_status)));
    IF p_status = 'cancelled' THEN
        PERFORM charter._node_evidence(v_instance, '$instance', 'cancel', 't' || v_instance.epoch, 'cancelled',
            jsonb_build_object('reason', p_reason), NULL, NULL);
    END IF;
    UPDATE charter.workflow_instances
       SET status = p_status, completed_at = now(), updated_at = now(), error = p_error,
           cancel_reason = CASE WHEN p_status = 'cancelled' THEN p_reason END
     WHERE id = p_run AND org_id = p_org_id;
    UPDATE charter.runs
       SET status = p_status, error = p_error, finished_at = now(), updated_at = now()
     WHERE id = p_run AND org_id = p_org_id AND status = 'running';
    PERFORM charter._instance_projection(p_run, p_org_id);
    IF v_instance.status = 'paused' THEN
        PERFORM charter._release_held_events(p_org_id, v_instance.document_id);
    END IF;
END;
$$;
