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
