-- The admin's last resort for a stuck instance: failed with STUCK_FORCE_FAILED, its pending
-- work cancelled with evidence; `retry_run` can take it up again later.
CREATE OR REPLACE FUNCTION charter.force_fail_instance(p_org_id text, p_run_id text, p_reason text,
                                                       p_actor text DEFAULT NULL)
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
    IF NOT FOUND OR v_instance.status NOT IN ('running', 'paused') THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_instance.org_id || '/' || v_instance.document_id));
    -- Under the lock: a paused instance is not stuck, it waits for an operator (and paused
    -- may become only running or cancelled).
    IF (SELECT i.status FROM charter.workflow_instances AS i
         WHERE i.id = p_run_id AND i.org_id = v_instance.org_id) = 'paused' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Instance %L is paused, so it is not stuck: it waits for an operator', p_run_id),
            HINT = 'Resume it (client.documents.resume), or cancel it (client.cancel).';
    END IF;
    PERFORM charter._finish_instance(p_run_id, v_instance.org_id, 'failed', jsonb_build_object(
        'code', 'STUCK_FORCE_FAILED', 'sqlstate', 'CH064',
        'message', format('Failed by %s: %s', coalesce(p_actor, session_user::text),
                          coalesce(nullif(p_reason, ''), 'stuck')),
        'hint', 'retry_run takes it up again from the nodes that were active.'),
        coalesce(nullif(p_reason, ''), 'stuck'));
    RETURN true;
END;
$$;
