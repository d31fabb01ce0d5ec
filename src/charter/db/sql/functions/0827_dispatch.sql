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
        v_audit := charter._eval_compiled(v_config->'expression', v_vars);
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
        v_audit := charter._eval_compiled(jsonb_build_object('expression', v_rule.expression, 'ast', v_rule.ast), v_vars);
        SELECT * INTO v_choice FROM charter._choose_edge(p_wf, p_node, v_audit->'result', v_vars);
        PERFORM charter._complete_node(p_instance, p_wf, p_node, ARRAY[v_choice.edge_id],
            jsonb_build_object('audit', v_audit, 'edgeAudits', v_choice.audits,
                               'rule', jsonb_build_object('id', v_rule.rule_id, 'version', v_rule.version)));
    WHEN 'script' THEN
        v_audit := charter._eval_compiled(v_config->'expression', v_vars);
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
            v_audit := charter._eval_compiled(v_item.v, v_vars);
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
            v_due := charter._now(p_instance.org_id) + (v_config->>'duration')::interval;
            v_audit := NULL;
        ELSE
            v_audit := charter._eval_compiled(v_config->'until', v_vars);
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
            v_due := charter._now(p_instance.org_id) + (v_config->>'timeout')::interval;
        END IF;
        PERFORM charter._wait(p_instance, p_node, v_type, v_state.token, 'event', v_key, v_key_text, v_due, v_due,
            jsonb_build_object('eventKey', v_key_text, 'timeoutAt', v_due));
        -- An event sent before the wait began is kept for it (inbound_events.expires_at):
        -- one sent for this document, or for none — unless this document is an amendment,
        -- whose keys repeat its original's: it takes only events that name it.
        SELECT * INTO v_event FROM charter.inbound_events AS e
         WHERE e.org_id = p_instance.org_id AND e.event_key = v_key_text AND e.consumed_at IS NULL
           AND e.expires_at > charter._now(p_instance.org_id)
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
                                      THEN coalesce(charter._eval_compiled(v, v_vars)->'result', 'null'::jsonb)
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
