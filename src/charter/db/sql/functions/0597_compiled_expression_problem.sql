-- The problem with a compiled expression {"expression": source, "ast": ...} as the compiler
-- stores it in node configurations and edge conditions, or NULL.
CREATE OR REPLACE FUNCTION charter._compiled_expression_problem(p_compiled jsonb, p_fields jsonb DEFAULT NULL,
                                                                p_boolean boolean DEFAULT false)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_compiled->'expression') IS DISTINCT FROM 'string' THEN
            'a compiled expression has no "expression" source text'
        WHEN length(p_compiled->>'expression') > 500 THEN
            format('the expression is %s characters long; the limit is 500', length(p_compiled->>'expression'))
        ELSE charter._ast_problem(p_compiled->'ast', p_fields, p_boolean)
    END
$$;
