-- Node handlers (seed 002 § Handler Atomicity Rule). TX-safe handlers (gates, condition,
-- rule, script, action, splits and joins) do their work in the dispatching transaction;
-- enqueue-only ones (wait_timer, wait_event, webhook_out, notification) and approval record
-- a wait and a running evidence row, and complete when the wait resumes.

-- Passes a gate: by the workflow (a body reached it: mutate() as system, the transition
-- following the body's outcome) or on behalf of the user whose transition the engine is
-- applying (p_user_transition: {from, to, label, actor}). The state the document left
-- completes, every other active node of the instance is withdrawn, and the token moves on.
CREATE OR REPLACE FUNCTION charter._pass_gate(
    p_instance charter.workflow_instances, p_wf jsonb, p_document charter.documents, p_gate text,
    p_user_transition jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_config  jsonb := p_wf #> ARRAY['nodes', p_gate, 'config'];
    v_state   charter.step_states;
    v_from    text;
    v_to      text;
    v_label   text;
    v_actor   text;
    v_changed jsonb;
    v_edge    text;
    v_state_node text;
    v_before  charter.workflow_instances := p_instance;
    v_applied jsonb;
    v_relied  jsonb;
    v_matched boolean;
    v_rejecting boolean := false;
BEGIN
    SELECT * INTO v_state FROM charter.step_states AS s WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_gate;
    IF p_user_transition IS NULL THEN
        v_from := p_document.state;
        -- The body's outcome picks the transition: its label or target state; else the
        -- gate's first transition from this state in the contract's order.
        SELECT t->>'to', t->>'label', coalesce(t->>'label' = v_state.outcome OR t->>'to' = v_state.outcome, false)
          INTO v_to, v_label, v_matched
          FROM jsonb_array_elements(v_config->'transitions') WITH ORDINALITY AS x(t, n)
         WHERE t->>'from' = v_from
         ORDER BY coalesce(t->>'label' = v_state.outcome OR t->>'to' = v_state.outcome, false) DESC, x.n
         LIMIT 1;
        IF v_to IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH035',
                MESSAGE = format('The workflow reached gate %s, but it does not lead anywhere from state %L', p_gate, v_from),
                HINT = 'The document left the state the body belongs to; check the definition''s slots.';
        END IF;
        v_actor := 'system';
        -- WF-03: the approvals that carried the body here hold for this very version (checked
        -- here, in the gate's transaction, whatever order the engine saw things in), and are
        -- consumed by this pass. A rejection's pass consumes nothing: what a chain's earlier
        -- stages approved was not approved in the end, and is voided below.
        v_rejecting := v_matched AND v_state.outcome IN ('reject', 'rejected');
        v_relied := charter._check_gate_approvals(p_instance, p_wf, p_document, p_gate, v_rejecting);
        v_applied := CASE WHEN v_rejecting THEN '[]'::jsonb
                          ELSE charter._consume_approvals(p_instance, p_document, p_gate) END;
        v_changed := charter.mutate(p_instance.org_id, v_config->>'gate', p_document.id, '{}'::jsonb, 'system',
            p_to => v_to, p_reason => format('passed by the workflow%s%s', coalesce(' (' || v_state.outcome || ')', ''),
                coalesce(': ' || (SELECT format('%s rejected: %s', d.actor, coalesce(d.comment, 'no reason given'))
                                    FROM charter.approval_decisions AS d
                                    JOIN charter.approval_requests AS r ON r.id = d.request_id AND d.org_id = r.org_id
                                   WHERE r.run_id = p_instance.id AND r.org_id = p_instance.org_id AND r.status = 'rejected' AND d.decision = 'rejected'
                                     AND v_state.outcome = 'reject'
                                   ORDER BY d.id DESC LIMIT 1), '')),
            p_trace_id => p_instance.trace_id, p_via => 'workflow', p_node_id => p_gate);
        UPDATE charter.workflow_instances AS i SET document_version = (v_changed->>'version')::integer
         WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id RETURNING * INTO p_instance;
        IF v_rejecting THEN
            UPDATE charter.approval_decisions AS d SET voided_at = now(), voided_version = p_instance.document_version
              FROM charter.approval_requests AS r
             WHERE d.org_id = p_instance.org_id AND r.id = d.request_id AND r.org_id = d.org_id
               AND r.run_id = p_instance.id AND r.org_id = p_instance.org_id
               AND d.applied_at IS NULL AND d.voided_at IS NULL;
        END IF;
    ELSE
        v_from := p_user_transition->>'from';
        v_to := p_user_transition->>'to';
        v_label := p_user_transition->>'label';
        v_actor := p_user_transition->>'actor';
    END IF;
    v_state_node := 'sys:state:' || v_from;
    PERFORM charter._cancel_active(p_instance, p_wf, ARRAY[p_gate, v_state_node],
        jsonb_build_object('reason', format('the document left state %s through gate %s', v_from, v_config->>'gate')));
    PERFORM charter._complete_node(p_instance, p_wf, v_state_node,
        ARRAY(SELECT e FROM (SELECT charter._edge_toward(p_wf, v_state_node, p_gate) AS e) AS x WHERE e IS NOT NULL),
        jsonb_build_object('left', jsonb_build_object('gate', v_config->>'gate', 'to', v_to)), v_actor);
    -- The gate is ready now (arrived from its state or from its body's exit).
    UPDATE charter.step_states AS s
       SET status = 'ready', token = coalesce(s.token, 't' || p_instance.epoch), arrivals = s.required, ready_at = clock_timestamp()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_gate AND s.status = 'waiting';
    IF p_user_transition IS NOT NULL THEN
        -- WF-14: the user's pass is this gate's execution; its receipt comes first.
        INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id)
        SELECT p_instance.id, charter._instance_key(p_instance.id, p_gate, s.token, v_before.document_version),
               p_instance.org_id
          FROM charter.step_states AS s WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_gate
        ON CONFLICT DO NOTHING;
    END IF;
    v_edge := charter._edge_toward(p_wf, p_gate, 'sys:state:' || v_to);
    IF v_edge IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH035',
            MESSAGE = format('Gate %s has no edge to state %s in this workflow', p_gate, v_to),
            HINT = 'The workflow version and the contract disagree; publish the definition again.';
    END IF;
    PERFORM charter._complete_node(v_before, p_wf, p_gate, ARRAY[v_edge],
        jsonb_build_object('transition', jsonb_build_object('gate', v_config->>'gate', 'from', v_from, 'to', v_to, 'label', v_label),
                           'passedBy', CASE WHEN p_user_transition IS NULL THEN 'workflow' ELSE 'user' END,
                           'appliedDecisions', v_applied,
                           'documentVersion', p_instance.document_version)
        -- The version the workflow moved, and the approval requests that pass relied on.
        || CASE WHEN p_user_transition IS NULL
                THEN jsonb_build_object('movedVersion', p_document.version, 'approvalRequests', v_relied)
                ELSE '{}'::jsonb END,
        v_actor);
END;
$$;
