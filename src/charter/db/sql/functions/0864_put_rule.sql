-- The org's rule store (rule nodes): putting a rule adds a version unless the expression and
-- description are the latest version's already.
CREATE OR REPLACE FUNCTION charter.put_rule(p_org_id text, p_rule_id text, p_expression text, p_ast jsonb, p_description text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_latest charter.rules;
BEGIN
    IF p_rule_id IS NULL OR p_rule_id !~ '^[A-Za-z0-9_.:-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH045',
            MESSAGE = format('%L is not a rule id: use 1 to 200 letters, digits, _ . : -', p_rule_id),
            HINT = 'For example credit.within_limit.';
    END IF;
    IF p_expression IS NULL OR length(p_expression) > 500 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH021',
            MESSAGE = format('Rule %s: the expression is %s; the limit is 500 characters', p_rule_id,
                             coalesce(length(p_expression) || ' characters long', 'missing')),
            HINT = 'Store rules with client.rules.put(rule_id, expression), which compiles them.';
    END IF;
    -- As the compiler makes it, and able to be true or false (a rule node takes one of two edges).
    PERFORM charter._check_ast(p_ast, NULL, format('Rule %s', p_rule_id), true);
    PERFORM pg_advisory_xact_lock(charter._lock_key('rule', format('%s:%s', v_org, p_rule_id)));
    SELECT * INTO v_latest FROM charter.rules AS r WHERE r.org_id = v_org AND r.rule_id = p_rule_id
     ORDER BY r.version DESC LIMIT 1;
    IF FOUND AND v_latest.expression = p_expression AND v_latest.description IS NOT DISTINCT FROM p_description THEN
        RETURN charter._rule_json(v_latest) || '{"status": "unchanged"}';
    END IF;
    INSERT INTO charter.rules (org_id, rule_id, version, expression, ast, description)
    VALUES (v_org, p_rule_id, coalesce(v_latest.version, 0) + 1, p_expression, p_ast, p_description)
    RETURNING * INTO v_latest;
    RETURN charter._rule_json(v_latest) || '{"status": "stored"}';
END;
$$;
