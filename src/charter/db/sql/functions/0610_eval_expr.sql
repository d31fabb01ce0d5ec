-- Evaluates a compiled expression ({"expression", "ast"}, or a bare AST) against variables
-- ({"entity": ..., "actor": ..., "org": ..., "context": ..., "now": ...}) and returns the
-- audit record of seed 002: {"expression", "variables": {path: value}, "result"}.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter.eval_expr(p_ast jsonb, p_vars jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    -- Only what charter's compiler makes is evaluated (node kinds, depth, size, variables;
    -- the types were checked where it was stored).
    IF charter._ast_problem(coalesce(p_ast->'ast', p_ast), NULL, false, false) IS NOT NULL THEN
        PERFORM charter._check_ast(coalesce(p_ast->'ast', p_ast));
    END IF;
    RETURN (
        WITH input AS (
            SELECT coalesce(p_ast->'ast', p_ast) AS ast, coalesce(p_vars, '{}'::jsonb) AS vars
        )
        SELECT jsonb_build_object(
            'expression', p_ast->'expression',
            'variables', coalesce((
                SELECT jsonb_object_agg(path, coalesce(input.vars #> string_to_array(path, '.'), 'null'))
                  FROM charter._expr_paths(input.ast) AS path), '{}'::jsonb),
            'result', charter._eval_ast(input.ast, input.vars))
          FROM input
    );
END;
$$;
