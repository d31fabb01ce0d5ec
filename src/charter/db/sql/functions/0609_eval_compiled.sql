-- charter.eval_expr without its check of the AST, for the instance engine: it evaluates only
-- what was checked where it was stored (a definition's expressions at publish, a rule at
-- put_rule) and comes from a version the worker verified (WF-07), so the check before every
-- evaluation (charter._ast_problem, about 100 µs) is left to eval_expr's other callers.
-- Returns the audit record {"expression", "variables": {path: value}, "result"}.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._eval_compiled(p_ast jsonb, p_vars jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
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
