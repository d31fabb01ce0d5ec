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

-- Evaluates a branching node's edges (condition and rule, seed 002 § Edge Model): in
-- (priority, id) order, the first edge whose condition is true — or whose label is the
-- node's own result, 'true' or 'false' — is taken; an edge with neither is the default.
CREATE OR REPLACE FUNCTION charter._choose_edge(p_wf jsonb, p_node text, p_result jsonb, p_vars jsonb, OUT edge_id text, OUT audits jsonb)
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_edge    record;
    v_default text;
    v_audit   jsonb;
BEGIN
    audits := '[]'::jsonb;
    FOR v_edge IN SELECT o.edge_id, o.edge FROM charter._out_edges(p_wf, p_node) AS o ORDER BY o.n LOOP
        IF v_edge.edge ? 'condition' THEN
            v_audit := charter.eval_expr(v_edge.edge->'condition', p_vars);
            audits := audits || jsonb_build_array(v_audit || jsonb_build_object('edgeId', v_edge.edge_id));
            IF v_audit->'result' = 'true'::jsonb THEN
                edge_id := v_edge.edge_id;
                RETURN;
            END IF;
        ELSIF v_edge.edge->>'label' IN ('true', 'false') THEN
            IF p_result = to_jsonb((v_edge.edge->>'label')::boolean) THEN
                edge_id := v_edge.edge_id;
                RETURN;
            END IF;
        ELSIF v_default IS NULL THEN
            v_default := v_edge.edge_id;
        END IF;
    END LOOP;
    edge_id := v_default;
    IF edge_id IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH042',
            MESSAGE = format('No edge out of %s matched (result %s) and it has no default edge', p_node, p_result),
            HINT = 'Give the node an edge without a condition, taken when no other matches.';
    END IF;
END;
$$;

-- Executes one ready node (WF-14: its receipt first; WF-09: one evidence row per dispatch).
CREATE OR REPLACE FUNCTION charter._dispatch(p_instance charter.workflow_instances, p_wf jsonb, p_document charter.documents, p_node text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_node    jsonb := p_wf #> ARRAY['nodes', p_node];
    v_type    text := v_node->>'type';
    v_config  jsonb := coalesce(v_node->'config', '{}'::jsonb);
    v_state   charter.step_states;
    v_key     text;
    v_vars    jsonb;
    v_audit   jsonb;
    v_choice  record;
    v_changes jsonb := '{}'::jsonb;
    v_item    record;
    v_result  jsonb;
    v_actor   text;
    v_due     timestamptz;
    v_rule    charter.rules;
    v_request jsonb;
    v_effect  text;
    v_event   charter.inbound_events;
    v_key_text text;
BEGIN
    SELECT * INTO v_state FROM charter.step_states AS s WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
    v_key := charter._instance_key(p_instance.id, p_node, v_state.token, p_instance.document_version);
    INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id)
    VALUES (p_instance.id, v_key, p_instance.org_id) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        -- This node already ran on this token at this version: never twice (WF-02).
        UPDATE charter.step_states AS s SET status = 'cancelled', completed_at = now()
         WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
        PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'cancelled', NULL,
            jsonb_build_object('reason', 'already executed', 'idempotencyKey', v_key), NULL);
        RETURN;
    END IF;
    IF v_state.outcome = 'reject' AND v_type IN ('action', 'approval', 'condition', 'rule', 'script',
                                                  'wait_timer', 'wait_event', 'webhook_out', 'notification') THEN
        -- A rejection travels to its gate: nothing else on its path runs.
        PERFORM charter._complete_node(p_instance, p_wf, p_node, charter._forward_edges(p_wf, p_node),
            jsonb_build_object('carried', 'reject', 'ran', false), NULL, 'reject');
        RETURN;
    END IF;
    -- Only the nodes that evaluate expressions or templates need the variables.
    IF v_type IN ('condition', 'rule', 'script', 'action', 'wait_timer', 'wait_event',
                  'webhook_out', 'notification', 'approval') THEN
        v_vars := charter._instance_vars(p_instance, p_document);
    END IF;

    CASE v_type
    WHEN 'start', 'slot_entry', 'slot_exit', 'parallel_split', 'parallel_join' THEN
        PERFORM charter._complete_node(p_instance, p_wf, p_node, charter._forward_edges(p_wf, p_node), NULL);
    WHEN 'end' THEN
        PERFORM charter._complete_node(p_instance, p_wf, p_node, '{}', NULL);
        PERFORM charter._finish_instance(p_instance.id, p_instance.org_id, 'completed', NULL);
    WHEN 'lifecycle_state' THEN
        -- A resting point: the token waits here until the document leaves the state. Bodies
        -- attached to the state start now; a state with no way out but the end ends the instance.
        UPDATE charter.step_states AS s SET status = 'running' WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
        IF NOT EXISTS (SELECT 1 FROM charter._out_edges(p_wf, p_node) AS o
                        WHERE p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] <> 'end') THEN
            PERFORM charter._complete_node(p_instance, p_wf, p_node, charter._forward_edges(p_wf, p_node),
                                           jsonb_build_object('state', v_config->>'state'));
            RETURN;
        END IF;
        PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'running',
            jsonb_build_object('state', v_config->>'state'), NULL, NULL, v_key);
        PERFORM charter._arrive(p_instance, p_wf, o.edge->>'target', v_state.token, false, o.edge->>'label', false)
           FROM charter._out_edges(p_wf, p_node) AS o
          WHERE p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'slot_entry'
          ORDER BY o.n;
    WHEN 'lifecycle_gate' THEN
        PERFORM charter._pass_gate(p_instance, p_wf, p_document, p_node, NULL);
    WHEN 'condition' THEN
        v_audit := charter.eval_expr(v_config->'expression', v_vars);
        SELECT * INTO v_choice FROM charter._choose_edge(p_wf, p_node, v_audit->'result', v_vars);
        PERFORM charter._complete_node(p_instance, p_wf, p_node, ARRAY[v_choice.edge_id],
            jsonb_build_object('audit', v_audit, 'edgeAudits', v_choice.audits));
    WHEN 'rule' THEN
        SELECT * INTO v_rule FROM charter.rules AS r
         WHERE r.org_id = p_instance.org_id AND r.rule_id = v_config->>'ruleId' ORDER BY r.version DESC LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH045',
                MESSAGE = format('Rule %L is not in the rule store of org %L', v_config->>'ruleId', p_instance.org_id),
                HINT = 'Store it with client.rules.put(rule_id, expression, description).';
        END IF;
        v_audit := charter.eval_expr(jsonb_build_object('expression', v_rule.expression, 'ast', v_rule.ast), v_vars);
        SELECT * INTO v_choice FROM charter._choose_edge(p_wf, p_node, v_audit->'result', v_vars);
        PERFORM charter._complete_node(p_instance, p_wf, p_node, ARRAY[v_choice.edge_id],
            jsonb_build_object('audit', v_audit, 'edgeAudits', v_choice.audits,
                               'rule', jsonb_build_object('id', v_rule.rule_id, 'version', v_rule.version)));
    WHEN 'script' THEN
        v_audit := charter.eval_expr(v_config->'expression', v_vars);
        IF v_config ? 'assignTo' THEN
            UPDATE charter.workflow_instances AS i
               SET context = jsonb_set(i.context, string_to_array(substr(v_config->>'assignTo', length('context.') + 1), '.'),
                                       v_audit->'result', true)
             WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id RETURNING * INTO p_instance;
        END IF;
        PERFORM charter._complete_node(p_instance, p_wf, p_node, charter._forward_edges(p_wf, p_node),
            jsonb_build_object('audit', v_audit, 'assignedTo', v_config->'assignTo'));
    WHEN 'action' THEN
        v_actor := CASE coalesce(v_config->>'runAs', 'actor')
            WHEN 'system' THEN 'system'
            WHEN 'service_account' THEN 'service:' || coalesce(v_config->>'serviceAccount', 'workflow')
            ELSE coalesce(p_instance.actor, 'system') END;
        FOR v_item IN SELECT k, v FROM jsonb_each(coalesce(v_config->'payloadTemplate', '{}'::jsonb)) AS x(k, v) ORDER BY k LOOP
            v_audit := charter.eval_expr(v_item.v, v_vars);
            v_changes := v_changes || jsonb_build_object(v_item.k, v_audit->'result');
        END LOOP;
        IF EXISTS (SELECT 1 FROM charter.workflow_versions AS c, jsonb_array_elements(coalesce(c.contract->'actions', '[]')) AS a
                    WHERE c.id = p_document.contract_version_id AND a->>'actionType' = v_config->>'actionType') THEN
            v_result := charter.mutate(p_instance.org_id, v_config->>'actionType', p_document.id, v_changes, v_actor,
                p_reason => format('workflow action at %s', p_node), p_trace_id => p_instance.trace_id,
                p_via => 'workflow', p_node_id => p_node);
            UPDATE charter.workflow_instances AS i SET document_version = (v_result->>'version')::integer
             WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id;
            PERFORM charter._complete_node(p_instance, p_wf, p_node, charter._forward_edges(p_wf, p_node),
                jsonb_build_object('mutation', jsonb_build_object('action', v_config->>'actionType', 'changes', v_changes,
                                   'version', v_result->'version', 'runAs', v_actor)), v_actor);
        ELSE
            -- An action type the contract does not declare: a Python handler registered with
            -- @charter.action runs it in a worker, at least once, with this step's key.
            PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'running',
                jsonb_build_object('handler', v_config->>'actionType', 'payload', v_changes), NULL, v_actor, v_key);
            UPDATE charter.step_states AS s SET status = 'running' WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
            INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, due_at, detail)
            VALUES (p_instance.id, p_node, p_instance.org_id, v_state.token, 'handler', p_instance.document_version, now(),
                    jsonb_build_object('actionType', v_config->>'actionType', 'payload', v_changes, 'runAs', v_actor,
                                       'idempotencyKey', v_key));
        END IF;
    WHEN 'wait_timer' THEN
        IF v_config ? 'duration' THEN
            v_due := charter._now() + (v_config->>'duration')::interval;
            v_audit := NULL;
        ELSE
            v_audit := charter.eval_expr(v_config->'until', v_vars);
            BEGIN
                v_due := (v_audit->>'result')::timestamptz;
            EXCEPTION WHEN others THEN
                v_due := NULL;
            END;
            IF v_due IS NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'CH046',
                    MESSAGE = format('The until expression of %s gave %s, not a time', p_node, v_audit->'result'),
                    HINT = 'Make it yield an ISO 8601 timestamp, e.g. a date field of the document.';
            END IF;
        END IF;
        PERFORM charter._wait(p_instance, p_node, v_type, v_state.token, 'timer', v_key, NULL, v_due, NULL,
            jsonb_build_object('until', v_due, 'audit', v_audit));
    WHEN 'wait_event' THEN
        v_key_text := charter._render(v_config->>'eventKey', v_vars);
        -- One at a time with send_event on this key: else an event sent while this wait is
        -- being written would see no wait, and this wait no event, and both would stay.
        PERFORM pg_advisory_xact_lock(charter._lock_key('event', p_instance.org_id || '/' || v_key_text));
        IF v_config ? 'timeout' THEN
            v_due := charter._now() + (v_config->>'timeout')::interval;
        END IF;
        PERFORM charter._wait(p_instance, p_node, v_type, v_state.token, 'event', v_key, v_key_text, v_due, v_due,
            jsonb_build_object('eventKey', v_key_text, 'timeoutAt', v_due));
        -- An event sent before the wait began is kept for it (inbound_events.expires_at):
        -- one sent for this document, or for none — unless this document is an amendment,
        -- whose keys repeat its original's: it takes only events that name it.
        SELECT * INTO v_event FROM charter.inbound_events AS e
         WHERE e.org_id = p_instance.org_id AND e.event_key = v_key_text AND e.consumed_at IS NULL
           AND e.expires_at > charter._now()
           AND (e.document_id = p_document.id
                OR (e.document_id IS NULL AND p_document.amended_from IS NULL))
         ORDER BY e.created_at LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            UPDATE charter.inbound_events AS e SET consumed_by = p_instance.id, consumed_at = now()
             WHERE e.org_id = v_event.org_id AND e.event_id = v_event.event_id;
            UPDATE charter.instance_waits AS w
               SET resume = jsonb_build_object('event', jsonb_build_object('id', v_event.event_id, 'key', v_event.event_key,
                                                                           'payload', v_event.payload)),
                   due_at = now()
             WHERE w.run_id = p_instance.id AND w.org_id = p_instance.org_id AND w.node_id = p_node;
        END IF;
    WHEN 'webhook_out', 'notification' THEN
        -- WF-10: enqueue-only. The rendered request goes to the side-effects outbox; the
        -- node completes when delivery is confirmed (confirm_side_effect).
        IF v_type = 'webhook_out' THEN
            v_request := jsonb_build_object(
                'url', charter._render(v_config->>'url', v_vars),
                'method', coalesce(v_config->>'method', 'POST'),
                'headers', coalesce((SELECT jsonb_object_agg(k, charter._render(v #>> '{}', v_vars))
                                       FROM jsonb_each(coalesce(v_config->'headers', '{}'::jsonb)) AS h(k, v)), '{}'::jsonb),
                -- payloadTemplate values are compiled expressions, as an action's are. An
                -- effective version stored before that rule keeps {…} text templates in
                -- them: it renders them as it always did (_render_value).
                'body', coalesce((SELECT jsonb_object_agg(k, CASE
                                      WHEN jsonb_typeof(v) = 'object' AND v ? 'ast' AND jsonb_typeof(v->'expression') = 'string'
                                      THEN coalesce(charter.eval_expr(v, v_vars)->'result', 'null'::jsonb)
                                      ELSE charter._render_value(v, v_vars) END)
                                    FROM jsonb_each(coalesce(v_config->'payloadTemplate', '{}'::jsonb)) AS b(k, v)), '{}'::jsonb));
            v_effect := 'webhook';
        ELSE
            v_request := jsonb_build_object(
                'channel', v_config->>'channel',
                'to', charter._render(v_config->>'to', v_vars),
                'recipients', charter._recipients(p_instance.org_id, v_config->>'channel', charter._render(v_config->>'to', v_vars)),
                'subject', charter._render(v_config->>'subject', v_vars),
                'body', charter._render(v_config->>'body', v_vars));
            v_effect := 'notification';
        END IF;
        v_key_text := encode(sha256(convert_to(v_key || '|' || v_effect, 'UTF8')), 'hex');
        INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
        VALUES (p_instance.org_id, 'side_effects', v_key_text) ON CONFLICT DO NOTHING;
        IF FOUND THEN
            INSERT INTO charter.side_effects (org_id, run_id, node_id, effect_type, request, idempotency_key, trace_id)
            VALUES (p_instance.org_id, p_instance.id, p_node, v_effect, v_request, v_key_text, p_instance.trace_id);
        END IF;
        PERFORM charter._wait(p_instance, p_node, v_type, v_state.token, 'delivery', v_key, NULL, NULL, NULL,
            jsonb_build_object('effect', v_effect, 'request', v_request, 'idempotencyKey', v_key_text));
    WHEN 'approval' THEN
        PERFORM charter._start_approval(p_instance, p_document, p_node, v_state.token, v_config, v_vars, v_key);
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CH046',
            MESSAGE = format('Node %s has type %s, which this engine does not run', p_node, v_type),
            HINT = 'Recompile the definition with this charter.';
    END CASE;
END;
$$;

-- Parks a node: a running evidence row and its wait (timer, event, delivery, approval).
CREATE OR REPLACE FUNCTION charter._wait(
    p_instance charter.workflow_instances, p_node text, p_type text, p_token text, p_kind text, p_key text,
    p_event_key text, p_due timestamptz, p_timeout timestamptz, p_detail jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.step_states AS s SET status = 'running' WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node;
    PERFORM charter._node_evidence(p_instance, p_node, p_type, p_token, 'running',
        jsonb_build_object('waitingFor', p_kind) || p_detail, NULL, NULL, p_key);
    INSERT INTO charter.instance_waits (run_id, node_id, org_id, token, kind, entity_version, event_key, due_at,
                                        timeout_at, detail)
    VALUES (p_instance.id, p_node, p_instance.org_id, p_token, p_kind, p_instance.document_version, p_event_key,
            p_due, p_timeout, p_detail);
END;
$$;

-- A notification's recipients from the directory: 'role:NAME' is everyone with the role,
-- a user id is that user (email or phone by channel), anything else is an address as given.
CREATE OR REPLACE FUNCTION charter._recipients(p_org_id text, p_channel text, p_to text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(
        CASE WHEN p_to LIKE 'role:%' THEN
            (SELECT jsonb_agg(jsonb_build_object('user', u.user_id,
                                                 'address', CASE WHEN p_channel = 'sms' THEN u.phone ELSE u.email END)
                              ORDER BY u.user_id)
               FROM charter.directory_users AS u
              WHERE u.org_id = p_org_id AND substr(p_to, 6) = ANY (u.roles))
        ELSE
            (SELECT jsonb_build_array(jsonb_build_object('user', u.user_id,
                                      'address', CASE WHEN p_channel = 'sms' THEN u.phone ELSE u.email END))
               FROM charter.directory_users AS u WHERE u.org_id = p_org_id AND u.user_id = p_to)
        END,
        CASE WHEN p_to LIKE 'role:%' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('address', p_to)) END)
$$;

-- Runs every ready node while the instance knows the document's current version; a node
-- that fails a charter check fails the instance with the error (its own work rolled back).
CREATE OR REPLACE FUNCTION charter._drain(p_run text, p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_document charter.documents;
    v_wf       jsonb;
    v_node     text;
    v_steps    integer := 0;
    v_state    text;
    v_message  text;
    v_hint     text;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
    SELECT v.compiled INTO v_wf FROM charter.workflow_versions AS v WHERE v.id = v_instance.version_id;
    LOOP
        SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_run AND i.org_id = p_org_id;
        EXIT WHEN v_instance.status <> 'running';
        SELECT * INTO v_document FROM charter.documents AS d
         WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
        -- Nodes that read or change the document wait while it has changes the engine has not
        -- seen yet (their events come next); the lifecycle's own nodes move on regardless.
        SELECT s.step_slug INTO v_node FROM charter.step_states AS s
         WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status = 'ready'
           AND (v_document.version = v_instance.document_version
                OR v_wf #>> ARRAY['nodes', s.step_slug, 'type'] IN
                   ('start', 'end', 'lifecycle_state', 'slot_entry', 'slot_exit', 'parallel_split', 'parallel_join'))
         ORDER BY s.ready_at, s.step_slug  -- first ready, first run: a split's paths in edge order
         LIMIT 1;
        EXIT WHEN v_node IS NULL;
        v_steps := v_steps + 1;
        IF v_steps > 10000 THEN
            RAISE EXCEPTION 'instance % ran more than 10000 nodes in one advance', p_run;
        END IF;
        BEGIN
            PERFORM charter._dispatch(v_instance, v_wf, v_document, v_node);
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT, v_hint = PG_EXCEPTION_HINT;
            IF v_state NOT LIKE 'CH%' THEN
                RAISE;  -- not a verdict on the workflow (a lost connection, a deadlock): retried
            END IF;
            PERFORM charter._fail_node(v_instance, v_wf, v_node,
                jsonb_build_object('sqlstate', v_state, 'message', v_message, 'hint', nullif(v_hint, ''), 'node', v_node));
        END;
    END LOOP;
    PERFORM charter._instance_projection(p_run, p_org_id);
END;
$$;

-- A node failed for good: its failed evidence, then the instance fails with the error.
CREATE OR REPLACE FUNCTION charter._fail_node(p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_error jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_token text;
BEGIN
    UPDATE charter.step_states AS s SET status = 'failed', completed_at = now()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node RETURNING s.token INTO v_token;
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_instance.id AND w.org_id = p_instance.org_id AND w.node_id = p_node;
    PERFORM charter._node_evidence(p_instance, p_node, p_wf #>> ARRAY['nodes', p_node, 'type'],
                                   coalesce(v_token, 't' || p_instance.epoch), 'failed', NULL, p_error, NULL);
    PERFORM charter._finish_instance(p_instance.id, p_instance.org_id, 'failed', p_error);
END;
$$;
