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
