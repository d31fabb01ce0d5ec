CREATE OR REPLACE FUNCTION charter.get_rule(p_org_id text, p_rule_id text, p_version integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org  text := charter._acting_org(p_org_id);
    v_rule charter.rules;
BEGIN
    SELECT * INTO v_rule FROM charter.rules AS r
     WHERE r.org_id = v_org AND r.rule_id = p_rule_id AND (p_version IS NULL OR r.version = p_version)
     ORDER BY r.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH045',
            MESSAGE = format('Rule %L%s is not in the rule store of org %L', p_rule_id,
                             coalesce(' version ' || p_version, ''), v_org),
            HINT = 'Store it with client.rules.put(rule_id, expression, description).';
    END IF;
    RETURN charter._rule_json(v_rule);
END;
$$;
