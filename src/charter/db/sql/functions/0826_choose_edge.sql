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
            v_audit := charter._eval_compiled(v_edge.edge->'condition', p_vars);
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
