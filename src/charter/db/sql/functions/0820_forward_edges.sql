-- The forward edges out of a node (all of them: a node without branching takes every way out).
CREATE OR REPLACE FUNCTION charter._forward_edges(p_wf jsonb, p_node text, p_except_label text DEFAULT NULL)
RETURNS text[]
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(o.edge_id ORDER BY o.n), '{}') FROM charter._out_edges(p_wf, p_node) AS o
             WHERE p_except_label IS NULL OR o.edge->>'label' IS DISTINCT FROM p_except_label);
END;
$$;
