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
    RETURN charter._eval_compiled(p_ast, p_vars);
END;
$$;
