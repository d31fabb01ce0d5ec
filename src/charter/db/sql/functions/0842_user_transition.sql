-- A user's transition (or one made before the instance could see it): the token must be at
-- the state the document left; the gate is recorded as passed by that user.
CREATE OR REPLACE FUNCTION charter._user_transition(p_instance charter.workflow_instances, p_wf jsonb, p_event charter.document_events)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_from   text := p_event.payload->>'from';
    v_gate   text := 'sys:gate:' || (p_event.payload->>'gate');
    v_status text;
    v_document charter.documents;
BEGIN
    SELECT s.status INTO v_status FROM charter.step_states AS s
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = 'sys:state:' || v_from;
    IF v_status IS DISTINCT FROM 'running' AND v_status IS DISTINCT FROM 'ready' THEN
        PERFORM charter._fail_node(p_instance, p_wf, 'sys:state:' || v_from, jsonb_build_object(
            'sqlstate', 'CH043',
            'message', format('The document went from %s through %s, but the instance was not at state %s (at %s)',
                              v_from, p_event.payload->>'gate', v_from, coalesce(array_to_string(p_instance.current_nodes, ', '), 'nothing')),
            'node', 'sys:state:' || v_from));
        RETURN;
    END IF;
    SELECT * INTO v_document FROM charter.documents AS d WHERE d.org_id = p_instance.org_id AND d.id = p_instance.document_id;
    PERFORM charter._pass_gate(p_instance, p_wf, v_document, v_gate, jsonb_build_object(
        'from', v_from, 'to', p_event.payload->>'to', 'label', p_event.payload->'label',
        'actor', p_event.payload->>'actor'));
END;
$$;
