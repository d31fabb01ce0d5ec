-- retry_run for a document's failed instance (the admin's explicit, recorded way out of
-- failed): the node that failed and the nodes its failure cancelled are ready again, as a
-- new round (fresh tokens, so fresh receipts), a $instance evidence row records who retried
-- what, and a retry wait has the engine run them. An instance that failed because its
-- node's effect dead-lettered (DELIVERY_FAILED) re-drives that same effect instead (same
-- row, same idempotency key: _redrive_effect), never a second one. Under the document's
-- lock (after the run's), the order re-drives take it in: one of them at a time, and the
-- instance read again under it.
CREATE OR REPLACE FUNCTION charter._retry_instance(p_run_id text, p_org_id text, p_actor text)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_nodes    text[];
    v_effect   charter.side_effects;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = p_org_id;
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_org_id || '/' || v_instance.document_id));
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_run_id AND i.org_id = p_org_id FOR UPDATE;
    IF v_instance.status <> 'failed' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is %s; only a failed run can be retried', p_run_id, v_instance.status),
            HINT = 'It was taken up meanwhile (retried, or its dead letter re-driven).';
    END IF;
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                WHERE i.org_id = p_org_id AND i.document_id = v_instance.document_id
                  AND i.status IN ('running', 'paused')) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L cannot be retried: document %L was restarted and has an active workflow instance',
                             p_run_id, v_instance.document_id),
            HINT = 'A document has one active instance; cancel the active one first if this one should go on.';
    END IF;
    IF v_instance.error #>> '{delivery,effectId}' ~ '^[0-9]+$' THEN
        SELECT * INTO v_effect FROM charter.side_effects AS x
         WHERE x.org_id = p_org_id AND x.id = (v_instance.error #>> '{delivery,effectId}')::bigint
           AND x.run_id = p_run_id
           FOR UPDATE;
        IF FOUND AND charter._failed_on_effect(v_instance, v_effect) THEN
            PERFORM charter._redrive_effect(v_effect, p_actor, 'retry_run');
            RETURN 'running';
        END IF;
    END IF;
    SELECT array_agg(s.step_slug ORDER BY s.step_slug) INTO v_nodes FROM charter.step_states AS s
     WHERE s.run_id = p_run_id AND s.org_id = p_org_id
       AND (s.status = 'failed' OR (s.status = 'cancelled' AND s.completed_at >= v_instance.completed_at));
    PERFORM set_config('charter.admin_override', 'on', true);
    UPDATE charter.workflow_instances AS i
       SET status = 'running', error = NULL, completed_at = NULL, epoch = i.epoch + 1, updated_at = now()
     WHERE i.id = p_run_id AND i.org_id = p_org_id RETURNING * INTO v_instance;
    PERFORM set_config('charter.admin_override', '', true);
    UPDATE charter.runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now()
     WHERE id = p_run_id AND org_id = p_org_id;
    UPDATE charter.step_states AS s
       SET status = 'ready', completed_at = NULL, ready_at = clock_timestamp(),
           token = regexp_replace(coalesce(s.token, 't1'), '^t[0-9]+', 't' || v_instance.epoch)
     WHERE s.run_id = p_run_id AND s.org_id = p_org_id AND s.step_slug = ANY (coalesce(v_nodes, '{}'));
    PERFORM charter._node_evidence(v_instance, '$instance', 'retry', 't' || v_instance.epoch, 'completed',
        jsonb_build_object('retry', to_jsonb(coalesce(v_nodes, '{}')), 'epoch', v_instance.epoch,
                           'by', p_actor), NULL, p_actor);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (p_run_id, '$retry', v_instance.org_id, 't' || v_instance.epoch, 'retry', v_instance.document_version, now())
    ON CONFLICT (run_id, node_id, org_id) DO UPDATE SET due_at = now();
    PERFORM charter._instance_projection(p_run_id, p_org_id);
    PERFORM pg_notify('charter_events', v_instance.org_id);
    RETURN 'running';
END;
$$;
