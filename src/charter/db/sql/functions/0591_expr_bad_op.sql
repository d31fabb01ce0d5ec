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
