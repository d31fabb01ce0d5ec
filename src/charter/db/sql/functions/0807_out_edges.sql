-- A node's outgoing edges in evaluation order (priority, id), as stored in the adjacency.
-- A SQL-standard body without a SET clause: PostgreSQL inlines it into the query using it.
CREATE OR REPLACE FUNCTION charter._out_edges(p_wf jsonb, p_node text)
RETURNS TABLE (edge_id text, edge jsonb, n bigint)
LANGUAGE sql
IMMUTABLE
BEGIN ATOMIC
    SELECT a.edge, p_wf #> ARRAY['edgesById', a.edge], a.n
      FROM jsonb_array_elements_text(coalesce(p_wf #> ARRAY['adjacency', p_node], '[]')) WITH ORDINALITY AS a(edge, n);
END;
