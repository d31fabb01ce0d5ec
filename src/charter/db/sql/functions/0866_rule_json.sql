CREATE OR REPLACE FUNCTION charter._rule_json(p_rule charter.rules)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('ruleId', p_rule.rule_id, 'version', p_rule.version, 'expression', p_rule.expression,
                              'description', p_rule.description, 'createdAt', p_rule.created_at)
$$;
