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
