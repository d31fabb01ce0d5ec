-- Raises EXPR_INVALID (CH021) for an AST the compiler would not have made.
CREATE OR REPLACE FUNCTION charter._check_ast(p_ast jsonb, p_fields jsonb DEFAULT NULL, p_where text DEFAULT NULL,
                                             p_boolean boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_problem text := charter._ast_problem(p_ast, p_fields, p_boolean);
BEGIN
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH021',
            MESSAGE = coalesce(p_where || ': ', '') || 'Not an expression node that charter''s compiler makes: ' || v_problem,
            HINT = 'Compile the expression with charter.expr.compile_expression() and pass its "ast" unchanged.';
    END IF;
END;
$$;
