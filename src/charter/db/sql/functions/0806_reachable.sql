-- Every node reachable from p_from over forward (non-loop) edges, p_from included.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._reachable(p_wf jsonb, p_from text)
RETURNS text[]
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        WITH RECURSIVE r(node) AS (
            SELECT p_from
            UNION
            SELECT e.value->>'target'
              FROM r JOIN LATERAL jsonb_array_elements_text(p_wf #> ARRAY['adjacency', r.node]) AS a(edge) ON true
              JOIN LATERAL (SELECT p_wf #> ARRAY['edgesById', a.edge] AS value) AS e ON true
             WHERE NOT coalesce((e.value->>'loop')::boolean, false)
        )
        SELECT array_agg(node ORDER BY node) FROM r
    );
END;
$$;
