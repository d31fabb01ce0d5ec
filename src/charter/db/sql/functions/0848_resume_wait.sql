-- One wait resumes: its node completes along the edges its outcome picks, then the
-- instance runs on. A wait whose node is no longer running is simply dropped; a paused
-- instance's wait is left as it is (paused since the poller read it).
CREATE OR REPLACE FUNCTION charter._resume_wait(p_wait charter.instance_waits, p_verified text[], p_refused jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
    v_wf       jsonb;
    v_status   text;
    v_chosen   text[];
    v_output   jsonb;
    v_outcome  text;
    v_resume   jsonb := coalesce(p_wait.resume, '{}'::jsonb);
    v_version  integer;
    v_result   jsonb;
    v_state    text;
    v_message  text;
BEGIN
    SELECT * INTO v_instance FROM charter.workflow_instances AS i WHERE i.id = p_wait.run_id AND i.org_id = p_wait.org_id;
    PERFORM 1 FROM charter.documents AS d
     WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id FOR UPDATE;
    IF v_instance.status = 'paused' THEN
        RETURN;
    END IF;
    IF p_wait.kind = 'retry' THEN
        DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_wait.run_id AND w.org_id = p_wait.org_id AND w.node_id = p_wait.node_id;
        v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
        PERFORM charter._catch_up(v_instance, v_wf);
        PERFORM charter._drain(v_instance.id, v_instance.org_id);
        RETURN;
    END IF;
    SELECT s.status INTO v_status FROM charter.step_states AS s
     WHERE s.run_id = p_wait.run_id AND s.org_id = p_wait.org_id AND s.step_slug = p_wait.node_id;
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_wait.run_id AND w.org_id = p_wait.org_id AND w.node_id = p_wait.node_id;
    IF v_instance.status <> 'running' OR v_status IS DISTINCT FROM 'running' THEN
        RETURN;
    END IF;
    v_wf := charter._verified_workflow(v_instance.version_id, p_verified, p_refused);
    CASE p_wait.kind
    WHEN 'timer' THEN
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := jsonb_build_object('firedAt', charter._now(v_instance.org_id), 'dueAt', p_wait.detail->'until');
    WHEN 'event' THEN
        IF v_resume ? 'event' THEN
            v_chosen := charter._forward_edges(v_wf, p_wait.node_id, 'timeout');
            v_output := jsonb_build_object('event', v_resume->'event');
            UPDATE charter.workflow_instances AS i
               SET context = i.context || jsonb_build_object('event', v_resume #> '{event,payload}')
             WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id RETURNING * INTO v_instance;
        ELSE
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o WHERE o.edge->>'label' = 'timeout';
            IF cardinality(v_chosen) = 0 THEN
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', 'CH049', 'node', p_wait.node_id,
                    'message', format('No event %L arrived before the timeout at %s, and %s has no edge labelled timeout',
                                      p_wait.event_key, p_wait.timeout_at, p_wait.node_id)));
                RETURN;
            END IF;
            v_output := jsonb_build_object('timedOut', true, 'eventKey', p_wait.event_key, 'timeoutAt', p_wait.timeout_at);
            v_outcome := 'timeout';
        END IF;
    WHEN 'delivery' THEN
        IF v_resume ? 'failed' THEN
            -- Dead-lettered: the node's `failed` edge, else the instance fails.
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o WHERE o.edge->>'label' = 'failed';
            IF cardinality(v_chosen) = 0 THEN
                -- A destination the webhook policy refused fails it with that code (CH105),
                -- a channel no worker can send with CHANNEL_NOT_CONFIGURED (CH125).
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', CASE WHEN v_resume #>> '{failed,error}' LIKE 'WEBHOOK\_DESTINATION\_DENIED:%'
                                     THEN 'CH105'
                                     WHEN v_resume #>> '{failed,error}' LIKE 'CHANNEL\_NOT\_CONFIGURED:%'
                                     THEN 'CH125' ELSE 'CH059' END,
                    'node', p_wait.node_id,
                    'message', format('Delivery of %s failed for good after %s attempts: %s', p_wait.node_id,
                                      v_resume #>> '{failed,attempts}', v_resume #>> '{failed,error}'),
                    'delivery', v_resume->'failed'));
                RETURN;
            END IF;
            v_output := jsonb_build_object('deliveryFailed', v_resume->'failed');
        ELSE
            v_chosen := charter._forward_edges(v_wf, p_wait.node_id, 'failed');
            v_output := jsonb_build_object('delivery', v_resume->'delivery');
        END IF;
    WHEN 'approval' THEN
        IF v_resume ? 'error' THEN
            -- A chain's next stage had nobody who may decide it (APPROVERS_EMPTY).
            PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, v_resume->'error');
            RETURN;
        END IF;
        IF NOT (v_resume ? 'outcome') THEN
            -- Its escalateAfter passed undecided: escalate, and wait on.
            PERFORM charter._escalate_approval(v_instance, p_wait);
            RETURN;
        END IF;
        v_outcome := v_resume->>'outcome';
        SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
          FROM charter._out_edges(v_wf, p_wait.node_id) AS o
         WHERE o.edge->>'label' = v_outcome;
        IF cardinality(v_chosen) = 0 THEN
            -- No edge for this outcome: it travels with the token (a rejection reaches the
            -- gate, which then takes its reject transition).
            SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') INTO v_chosen
              FROM charter._out_edges(v_wf, p_wait.node_id) AS o
             WHERE o.edge->>'label' IS NULL OR o.edge->>'label' NOT IN ('approved', 'rejected');
            v_outcome := CASE WHEN v_outcome = 'rejected' THEN 'reject' ELSE v_outcome END;
        END IF;
        v_output := jsonb_build_object('approval', v_resume);
    WHEN 'handler' THEN
        IF v_resume ? 'error' THEN
            PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, v_resume->'error' || jsonb_build_object(
                'node', p_wait.node_id, 'actionType', p_wait.detail->>'actionType', 'attempts', p_wait.attempts));
            RETURN;
        END IF;
        SELECT d.version INTO v_version FROM charter.documents AS d
         WHERE d.org_id = v_instance.org_id AND d.id = v_instance.document_id;
        IF v_version <> v_instance.document_version THEN
            -- The document has changes the instance has not seen: apply the patch after them.
            RAISE EXCEPTION 'document % changed meanwhile; the action result waits for its events',
                v_instance.document_id;
        END IF;
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := jsonb_build_object('handler', jsonb_build_object(
            'actionType', p_wait.detail->>'actionType', 'patch', v_resume->'patch', 'attempts', p_wait.attempts));
        IF v_resume->'patch' <> '{}'::jsonb THEN
            BEGIN
                v_result := charter.mutate(v_instance.org_id, p_wait.detail->>'actionType', v_instance.document_id,
                    v_resume->'patch', coalesce(p_wait.detail->>'runAs', 'system'),
                    p_reason => format('workflow action at %s', p_wait.node_id), p_trace_id => v_instance.trace_id,
                    p_via => 'workflow', p_node_id => p_wait.node_id);
            EXCEPTION WHEN others THEN
                GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
                IF v_state NOT LIKE 'CH%' THEN
                    RAISE;
                END IF;
                -- The document refuses the patch (a field, a policy): the node fails, for good.
                PERFORM charter._fail_node(v_instance, v_wf, p_wait.node_id, jsonb_build_object(
                    'sqlstate', v_state, 'message', v_message, 'node', p_wait.node_id,
                    'actionType', p_wait.detail->>'actionType', 'patch', v_resume->'patch'));
                RETURN;
            END;
            UPDATE charter.workflow_instances AS i SET document_version = (v_result->>'version')::integer
             WHERE i.id = v_instance.id AND i.org_id = v_instance.org_id;
            v_output := v_output || jsonb_build_object('mutation', jsonb_build_object('version', v_result->'version'));
        END IF;
    ELSE
        v_chosen := charter._forward_edges(v_wf, p_wait.node_id);
        v_output := v_resume;
    END CASE;
    PERFORM charter._complete_node(v_instance, v_wf, p_wait.node_id, v_chosen, v_output,
                                   v_resume->>'actor', v_outcome);
    PERFORM charter._drain(v_instance.id, v_instance.org_id);
END;
$$;
