-- Evaluates an expression AST against variables: the SQL twin of charter.expr.evaluate
-- (same semantics, checked by a property test). See charter/expr/evaluate.py.
CREATE OR REPLACE FUNCTION charter._eval_ast(p_ast jsonb, p_vars jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_args  jsonb[];
    v_left  jsonb;
    v_right jsonb;
    v_op    text;
BEGIN
    CASE p_ast->>'type'
    WHEN 'literal' THEN
        RETURN coalesce(p_ast->'value', 'null');
    WHEN 'var' THEN
        RETURN coalesce(p_vars #> string_to_array(p_ast->>'path', '.'), 'null');
    WHEN 'now' THEN
        IF jsonb_typeof(p_vars->'now') IS NOT NULL AND jsonb_typeof(p_vars->'now') <> 'null' THEN
            RETURN p_vars->'now';
        END IF;
        RETURN to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'));
    WHEN 'list' THEN
        RETURN coalesce((SELECT jsonb_agg(charter._eval_ast(i.item, p_vars) ORDER BY i.n)
                           FROM jsonb_array_elements(p_ast->'items') WITH ORDINALITY AS i(item, n)),
                        '[]');
    WHEN 'op' THEN
        NULL;
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CH021',
            MESSAGE = format('Not an expression node: %s', left(p_ast::text, 200)),
            HINT = 'Pass the "ast" that charter.expr.compile_expression() produced.';
    END CASE;

    SELECT array_agg(charter._eval_ast(a.arg, p_vars) ORDER BY a.n) INTO v_args
      FROM jsonb_array_elements(p_ast->'args') WITH ORDINALITY AS a(arg, n);
    v_op := p_ast->>'op';
    v_left := v_args[1];
    v_right := v_args[2];
    RETURN to_jsonb(CASE v_op
        WHEN '!' THEN v_left IS DISTINCT FROM 'true'::jsonb
        WHEN '&&' THEN v_left = 'true'::jsonb AND v_right = 'true'::jsonb
        WHEN '||' THEN v_left = 'true'::jsonb OR v_right = 'true'::jsonb
        WHEN '==' THEN v_left = v_right
        WHEN '!=' THEN v_left <> v_right
        WHEN 'in' THEN jsonb_typeof(v_right) = 'array'
                       AND EXISTS (SELECT 1 FROM jsonb_array_elements(v_right) AS e WHERE e = v_left)
        WHEN 'contains' THEN CASE jsonb_typeof(v_left)
            WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(v_left) AS e WHERE e = v_right)
            WHEN 'string' THEN jsonb_typeof(v_right) = 'string'
                               AND strpos(v_left #>> '{}', v_right #>> '{}') > 0
            ELSE false END
        WHEN '>' THEN coalesce(charter._expr_order(v_left, v_right) > 0, false)
        WHEN '>=' THEN coalesce(charter._expr_order(v_left, v_right) >= 0, false)
        WHEN '<' THEN coalesce(charter._expr_order(v_left, v_right) < 0, false)
        WHEN '<=' THEN coalesce(charter._expr_order(v_left, v_right) <= 0, false)
        ELSE charter._expr_bad_op(v_op) END);
END;
$$;
