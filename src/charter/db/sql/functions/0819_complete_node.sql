-- Finishes a node: evidence, then arrivals along the chosen edges (a parallel_split gives
-- each of its paths its own token) and skips along the others.
CREATE OR REPLACE FUNCTION charter._complete_node(
    p_instance charter.workflow_instances, p_wf jsonb, p_node text, p_chosen text[], p_output jsonb,
    p_actor text DEFAULT NULL, p_outcome text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_type  text := p_wf #>> ARRAY['nodes', p_node, 'type'];
    v_state charter.step_states;
    v_edge  record;
    v_path  integer := 0;
    v_token text;
    v_loop  boolean;
BEGIN
    UPDATE charter.step_states AS s SET status = 'completed', completed_at = now()
     WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.step_slug = p_node AND s.status IN ('ready', 'running')
    RETURNING * INTO v_state;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM charter._node_evidence(p_instance, p_node, v_type, v_state.token, 'completed',
        coalesce(p_output, '{}'::jsonb) || jsonb_build_object('chosenEdgeIds', to_jsonb(coalesce(p_chosen, '{}'))),
        NULL, p_actor);
    FOR v_edge IN SELECT o.edge_id, o.edge FROM charter._out_edges(p_wf, p_node) AS o ORDER BY o.n LOOP
        v_loop := coalesce((v_edge.edge->>'loop')::boolean, false);
        IF v_edge.edge_id = ANY (coalesce(p_chosen, '{}')) THEN
            v_token := v_state.token;
            IF v_type = 'parallel_split' THEN
                v_token := v_state.token || '/' || p_node || '#' || v_path;
                v_path := v_path + 1;
            END IF;
            PERFORM charter._arrive(p_instance, p_wf, v_edge.edge->>'target', v_token, false,
                coalesce(p_outcome, v_edge.edge->>'label', v_state.outcome), v_loop);
            -- A loop starts a new round: read the instance's epoch again (only _arrive's loop
            -- changes the instance).
            IF v_loop THEN
                SELECT * INTO p_instance FROM charter.workflow_instances AS i WHERE i.id = p_instance.id AND i.org_id = p_instance.org_id;
            END IF;
        ELSIF NOT v_loop THEN
            PERFORM charter._arrive(p_instance, p_wf, v_edge.edge->>'target', v_state.token, true, NULL, false);
        END IF;
    END LOOP;
END;
$$;
