-- A stuck instance, run again: a retry wait due now makes the engine drain it (ready nodes
-- run, a gate it reached passes). Recorded as evidence with who asked.
CREATE OR REPLACE FUNCTION charter.nudge_instance(p_org_id text, p_run_id text, p_actor text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = charter._acting_org(p_org_id);
    IF NOT FOUND OR v_instance.status <> 'running' THEN
        RETURN false;
    END IF;
    -- The engine's lock order: the document first.
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_instance.org_id || '/' || v_instance.document_id));
    PERFORM charter._node_evidence(v_instance, '$instance', 'nudge', 't' || v_instance.epoch, 'completed',
        jsonb_build_object('nudged', true, 'by', coalesce(p_actor, session_user::text)), NULL, NULL);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (p_run_id, '$retry', v_instance.org_id, 't' || v_instance.epoch, 'retry', v_instance.document_version, now())
    ON CONFLICT (run_id, node_id, org_id) DO UPDATE SET due_at = now();
    PERFORM pg_notify('charter_events', v_instance.org_id);
    RETURN true;
END;
$$;
