-- -1, 0 or 1 when a and b are two numbers or two strings (by code point), else NULL (so
-- every ordering comparison is false), for charter._eval_ast.
CREATE OR REPLACE FUNCTION charter._expr_order(p_a jsonb, p_b jsonb)
RETURNS integer
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_a) = 'number' AND jsonb_typeof(p_b) = 'number' THEN
            sign((p_a #>> '{}')::numeric - (p_b #>> '{}')::numeric)::integer
        WHEN jsonb_typeof(p_a) = 'string' AND jsonb_typeof(p_b) = 'string' THEN
            CASE WHEN (p_a #>> '{}') COLLATE "C" < (p_b #>> '{}') COLLATE "C" THEN -1
                 WHEN (p_a #>> '{}') = (p_b #>> '{}') THEN 0 ELSE 1 END
    END
$$;

CREATE OR REPLACE FUNCTION charter._expr_bad_op(p_op text)
RETURNS boolean
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'CH021', MESSAGE = format('Unknown expression operator %L', p_op),
        HINT = 'Pass the "ast" that charter.expr.compile_expression() produced.';
END;
$$;

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
