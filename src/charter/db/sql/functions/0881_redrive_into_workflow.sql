-- A workflow's effect re-driven, by re-driving its dead letter (retry_side_effects) or by
-- retrying its failed instance (retry_run): one effect, one row, one idempotency key. The
-- instance that failed with DELIVERY_FAILED because of it resumes at once with its node
-- waiting for that effect again, so the node completes when the effect is delivered and the
-- instance goes on along its normal edge (or fails again if the effect dead-letters again).
-- Evidence names who re-drove it: the effect's interventions, a $instance 'redrive' row and
-- an instance.redrive audit row. Callers hold the document's lock, then the effect's row.

-- Whether the instance ended failed because of this effect (at its node, not since retried).
CREATE OR REPLACE FUNCTION charter._failed_on_effect(p_instance charter.workflow_instances, p_effect charter.side_effects)
RETURNS boolean
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT p_instance.status = 'failed'
       AND p_instance.error #>> '{delivery,effectId}' = p_effect.id::text
       AND p_instance.error->>'node' = p_effect.node_id
       AND EXISTS (SELECT 1 FROM charter.step_states AS s
                    WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id
                      AND s.step_slug = p_effect.node_id AND s.status = 'failed')
$$;

-- Sends the effect again (a dead letter, or one an admin dropped, back to pending with its
-- key and fresh attempts, the intervention recorded), and has its instance take it up: a
-- failed instance resumes at the node (_redrive_instance) unless its document has another
-- active instance now; a running one whose wait took the dead letter but has not fired yet
-- waits again. p_via names the call ('dead_letters.retry' or 'retry_run'). Returns whether
-- the instance resumed.
CREATE OR REPLACE FUNCTION charter._redrive_effect(p_effect charter.side_effects, p_actor text, p_via text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    IF p_effect.status IN ('dead_letter', 'cancelled') THEN
        -- A dropped effect is final but for this recorded admin call (retry_run).
        PERFORM set_config('charter.admin_override', CASE WHEN p_effect.status = 'cancelled' THEN 'on' ELSE '' END, true);
        UPDATE charter.side_effects AS x
           SET status = 'pending', attempts = 0, next_retry_at = now(), completed_at = NULL, worker_id = NULL,
               interventions = x.interventions || jsonb_build_object(
                   'action', 'retry', 'by', p_actor, 'at', now(), 'lastError', x.error, 'attempts', x.attempts,
                   'via', p_via)
         WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
        RETURNING * INTO p_effect;
        PERFORM set_config('charter.admin_override', '', true);
    END IF;
    IF p_effect.run_id IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_effect.run_id AND i.org_id = p_effect.org_id;
    IF v_instance.status IN ('running', 'paused') THEN
        UPDATE charter.instance_waits AS w SET resume = NULL, due_at = NULL
         WHERE w.run_id = p_effect.run_id AND w.org_id = p_effect.org_id AND w.node_id = p_effect.node_id
           AND w.kind = 'delivery' AND w.detail->>'idempotencyKey' = p_effect.idempotency_key
           AND w.resume ? 'failed';
        RETURN false;
    END IF;
    IF NOT coalesce(charter._failed_on_effect(v_instance, p_effect), false)
       OR EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                   WHERE i.org_id = v_instance.org_id AND i.document_id = v_instance.document_id
                     AND i.status IN ('running', 'paused')) THEN
        RETURN false;  -- it ended otherwise, or the document moved on: delivered, nothing resumes
    END IF;
    PERFORM charter._redrive_instance(v_instance, p_effect, p_actor, p_via);
    RETURN true;
END;
$$;

-- The failed instance runs again, as retry_run would have it (a new round: the nodes its
-- failure cancelled are ready again with fresh tokens, a retry wait has the engine run
-- them), except the effect's node: it waits for the same effect again (its wait carries the
-- effect's key), done at once if the effect was delivered meanwhile.
CREATE OR REPLACE FUNCTION charter._redrive_instance(
    p_instance charter.workflow_instances, p_effect charter.side_effects, p_actor text, p_via text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_nodes    text[];
    v_token    text;
    v_type     text;
    v_detail   jsonb;
BEGIN
    SELECT array_agg(s.step_slug ORDER BY s.step_slug) INTO v_nodes FROM charter.step_states AS s
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id
       AND s.status = 'cancelled' AND s.completed_at >= p_instance.completed_at;
    PERFORM set_config('charter.admin_override', 'on', true);
    UPDATE charter.workflow_instances AS i
       SET status = 'running', error = NULL, completed_at = NULL, epoch = i.epoch + 1, updated_at = now()
     WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id RETURNING * INTO v_instance;
    PERFORM set_config('charter.admin_override', '', true);
    UPDATE charter.runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now()
     WHERE id = v_instance.id AND org_id = v_instance.org_id;
    UPDATE charter.step_states AS s
       SET status = 'ready', completed_at = NULL, ready_at = clock_timestamp(),
           token = regexp_replace(coalesce(s.token, 't1'), '^t[0-9]+', 't' || v_instance.epoch)
     WHERE s.run_id = v_instance.id AND s.org_id = v_instance.org_id AND s.step_slug = ANY (coalesce(v_nodes, '{}'));
    UPDATE charter.step_states AS s
       SET status = 'running', completed_at = NULL,
           token = regexp_replace(coalesce(s.token, 't1'), '^t[0-9]+', 't' || v_instance.epoch)
     WHERE s.run_id = v_instance.id AND s.org_id = v_instance.org_id AND s.step_slug = p_effect.node_id
    RETURNING s.token INTO v_token;
    SELECT v.compiled #>> ARRAY['nodes', p_effect.node_id, 'type'] INTO v_type
      FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    v_detail := jsonb_build_object('effect', p_effect.effect_type, 'request', p_effect.request,
                                   'idempotencyKey', p_effect.idempotency_key, 'effectId', p_effect.id,
                                   'redrivenBy', p_actor);
    PERFORM charter._node_evidence(v_instance, p_effect.node_id, v_type, v_token, 'running',
        jsonb_build_object('waitingFor', 'delivery') || v_detail, NULL, p_actor);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at, detail, resume)
    VALUES (v_instance.id, p_effect.node_id, v_instance.org_id, v_token, 'delivery', v_instance.document_version,
            CASE WHEN p_effect.status = 'completed' THEN now() END, v_detail,
            CASE WHEN p_effect.status = 'completed' THEN jsonb_build_object('delivery', jsonb_build_object(
                'effectId', p_effect.id, 'response', coalesce(p_effect.response, '{}'::jsonb) - 'body')) END);
    PERFORM charter._node_evidence(v_instance, '$instance', 'redrive', 't' || v_instance.epoch, 'completed',
        jsonb_build_object('node', p_effect.node_id, 'effectId', p_effect.id,
                           'idempotencyKey', p_effect.idempotency_key, 'by', p_actor, 'via', p_via,
                           'epoch', v_instance.epoch, 'retry', to_jsonb(coalesce(v_nodes, '{}'))),
        NULL, p_actor);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at)
    VALUES (v_instance.id, '$retry', v_instance.org_id, 't' || v_instance.epoch, 'retry', v_instance.document_version, now())
    ON CONFLICT (run_id, node_id, org_id) DO UPDATE SET due_at = now();
    PERFORM charter._instance_projection(v_instance.id, v_instance.org_id);
    SELECT * INTO v_document FROM charter.documents AS d
     WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
    PERFORM charter._instance_audit(v_document, 'instance.redrive', p_actor, NULL,
        jsonb_build_object('runId', v_instance.id, 'node', p_effect.node_id, 'effectId', p_effect.id,
                           'idempotencyKey', p_effect.idempotency_key, 'via', p_via));
    PERFORM pg_notify('charter_events', v_instance.org_id);
END;
$$;
