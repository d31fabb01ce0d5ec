-- Withdraws a node's pending work (its wait, approval request, undelivered side effects)
-- and records it as cancelled with the reason.
CREATE OR REPLACE FUNCTION charter._cancel_node(p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_reason jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_state charter.step_states;
BEGIN
    UPDATE charter.step_states AS s SET status = 'cancelled', completed_at = now()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node AND s.status IN ('ready', 'running')
    RETURNING * INTO v_state;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    DELETE FROM charter.instance_waits AS w WHERE w.run_id = p_instance.id AND w.org_id = p_instance.org_id AND w.node_id = p_node;
    UPDATE charter.approval_requests AS a SET status = 'cancelled', closed_at = now(), outcome_reason = p_reason->>'reason'
     WHERE a.run_id = p_instance.id AND a.org_id = p_instance.org_id AND a.node_id = p_node AND a.status = 'pending';
    UPDATE charter.side_effects AS x SET status = 'cancelled', completed_at = now()
     WHERE x.run_id = p_instance.id AND x.org_id = p_instance.org_id AND x.node_id = p_node AND x.status IN ('pending', 'failed');
    PERFORM charter._node_evidence(p_instance, p_node, p_wf #>> ARRAY['nodes', p_node, 'type'],
                                   coalesce(v_state.token, 't' || p_instance.epoch), 'cancelled', NULL, p_reason, NULL);
END;
$$;
