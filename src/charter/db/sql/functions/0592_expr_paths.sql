-- Every variable path an AST reads, for the audit record.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._expr_paths(p_ast jsonb)
RETURNS SETOF text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN QUERY
        WITH RECURSIVE nodes(node) AS (
            SELECT p_ast
            UNION ALL
            SELECT child.value
              FROM nodes, jsonb_array_elements(
                       coalesce(nodes.node->'args', nodes.node->'items', '[]'::jsonb)) AS child
        )
        SELECT DISTINCT node->>'path' FROM nodes WHERE node->>'type' = 'var';
END;
$$;
