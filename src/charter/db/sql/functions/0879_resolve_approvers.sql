-- Approvals bound to a version (seed 002 WF-03, § Composable Approval Chains): resolving
-- approvers once, deciding, consuming at the gate, voiding on change, and the reads
-- (inbox, a request, its snapshot and diff, a document's approval history).

-- The approvers of an inline approval node, resolved once when its token arrives: users,
-- everyone with a role in the org's directory, the user ids a rule yields, the manager of the
-- user who drove the instance. Nobody → APPROVERS_EMPTY naming the rule.
CREATE OR REPLACE FUNCTION charter._resolve_approvers(
    p_instance charter.workflow_instances, p_node text, p_config jsonb, p_vars jsonb)
RETURNS text[]
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_rule   jsonb;
    v_result jsonb;
    v_found  text[] := '{}';
BEGIN
    FOR v_rule IN SELECT a FROM jsonb_array_elements(coalesce(p_config->'approvers', '[]'::jsonb)) AS a LOOP
        IF v_rule ? 'user' THEN
            v_found := v_found || ARRAY(SELECT u.user_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND u.user_id = v_rule->>'user');
        ELSIF v_rule ? 'role' THEN
            v_found := v_found || ARRAY(SELECT u.user_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND v_rule->>'role' = ANY (u.roles));
        ELSIF v_rule ? 'rule' THEN
            v_result := charter.eval_expr(v_rule->'rule', p_vars)->'result';
            v_found := v_found || ARRAY(
                SELECT u.user_id FROM charter.directory_users AS u
                 WHERE u.org_id = p_instance.org_id
                   AND u.user_id IN (SELECT x FROM jsonb_array_elements_text(
                        CASE jsonb_typeof(v_result) WHEN 'array' THEN v_result
                             WHEN 'string' THEN jsonb_build_array(v_result) ELSE '[]'::jsonb END) AS x));
        ELSIF v_rule ? 'managerOf' THEN
            v_found := v_found || ARRAY(SELECT u.manager_id FROM charter.directory_users AS u
                                         WHERE u.org_id = p_instance.org_id AND u.user_id = p_instance.actor
                                           AND u.manager_id IS NOT NULL);
        END IF;
    END LOOP;
    v_found := ARRAY(SELECT DISTINCT x FROM unnest(v_found) AS x ORDER BY x);
    IF cardinality(v_found) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH051',
            MESSAGE = format('The approvers of %s resolve to nobody: %s', p_node, p_config->'approvers'),
            HINT = 'Give someone the role in the directory, or fix the rule so it names a user of the org.';
    END IF;
    RETURN v_found;
END;
$$;
