-- A concurrency or rate-limit key from its spelling: a template ('acct:{run.account_id}'),
-- a path into the run input ('run.customer_id'), or a fixed name ('stripe'); NULL stays NULL.
CREATE OR REPLACE FUNCTION charter._flow_key(p_expression text, p_vars jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN CASE
        WHEN p_expression IS NULL THEN NULL
        WHEN p_expression LIKE '%{%' THEN charter._render(p_expression, p_vars)
        WHEN p_expression = 'run' OR p_expression LIKE 'run.%' THEN
            charter._render('{' || p_expression || '}', p_vars)
        ELSE p_expression END;
END;
$$;
