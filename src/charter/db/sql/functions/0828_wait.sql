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
