-- cancel_run of a document's workflow instance: cancel means cancel. Under the document's
-- lock (the engine's order), its active nodes are withdrawn (_finish_instance), then
-- whatever else it still had: every wait (a retry's, a handler task's), every pending
-- approval request (a decision afterwards is APPROVAL_CLOSED) and every side effect not yet
-- handed to delivery (one a worker is sending is not called back). The document stays in its
-- lifecycle state; an audit row names who cancelled it and why. Cancelling a cancelled
-- instance is a no-op; a completed or failed one cannot be cancelled. Returns the status.
CREATE OR REPLACE FUNCTION charter._cancel_instance(p_run_id text, p_org_id text, p_actor text, p_reason text)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_reason   text;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = p_org_id;
    v_document := charter._instance_act_document(p_org_id, v_instance.document_id, p_actor);
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = p_org_id;
    IF v_instance.status = 'cancelled' THEN
        RETURN 'cancelled';
    END IF;
    IF v_instance.status NOT IN ('running', 'paused') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is the workflow instance of document %L and is %s; only a running or paused one can be cancelled',
                             p_run_id, v_instance.document_id, v_instance.status),
            HINT = CASE WHEN v_instance.status = 'failed'
                        THEN 'A failed instance can be retried (charter retry), or restarted on the org''s current workflow (client.documents.restart).'
                        ELSE 'There is nothing left to cancel.' END;
    END IF;
    v_reason := coalesce(nullif(p_reason, ''), format('cancelled by %s', p_actor));
    PERFORM charter._finish_instance(p_run_id, p_org_id, 'cancelled', NULL, v_reason);
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_run_id AND w.org_id = p_org_id;
    UPDATE charter.approval_requests AS a SET status = 'cancelled', closed_at = now(), outcome_reason = v_reason
     WHERE a.run_id = p_run_id AND a.org_id = p_org_id AND a.status = 'pending';
    UPDATE charter.side_effects AS x SET status = 'cancelled', completed_at = now()
     WHERE x.run_id = p_run_id AND x.org_id = p_org_id AND x.status IN ('pending', 'failed');
    PERFORM charter._instance_audit(v_document, 'instance.cancel', p_actor, v_reason,
        jsonb_build_object('runId', p_run_id, 'from', v_instance.status, 'to', 'cancelled'));
    PERFORM pg_notify('charter_runs', p_run_id);
    RETURN 'cancelled';
END;
$$;
