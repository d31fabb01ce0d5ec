-- Refuses an actor the contract's policy for p_key does not allow. The policy is p_key's,
-- else the contract's "*" default. Closed by default: with neither, a gate or a declared
-- action is refused to everyone (CONTRACT_POLICY_MISSING: publish requires one, so only a
-- contract stored before that rule lacks it), while create, update and amend stay open to
-- any actor of the org. The reserved actors act for the engine and pass.
CREATE OR REPLACE FUNCTION charter._check_policy(
    p_contract jsonb, p_key text, p_actor jsonb, p_entity jsonb, p_org_data jsonb, p_context jsonb)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_policy jsonb := coalesce(p_contract #> ARRAY['policies', p_key], p_contract #> '{policies,*}');
    v_result jsonb;
BEGIN
    IF (p_actor->>'reserved')::boolean THEN
        RETURN;
    END IF;
    IF v_policy IS NULL THEN
        IF p_contract->'transitions' @> jsonb_build_array(jsonb_build_object('gate', p_key))
           OR p_contract->'actions' @> jsonb_build_array(jsonb_build_object('actionType', p_key)) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH090',
                MESSAGE = format('Actor %L may not %s: the %s contract states no policy for %s %L and no "*" default, and what no policy grants is refused',
                                 p_actor->>'id', p_key, p_contract->>'entityType',
                                 CASE WHEN p_contract->'transitions' @> jsonb_build_array(jsonb_build_object('gate', p_key))
                                      THEN 'gate' ELSE 'action' END, p_key),
                HINT = format('Publish the contract again with a policy for %s (e.g. "%s": {"roles": ["clerk"]}) or a "*" default: charter publish CONTRACT.json.',
                              p_key, p_key);
        END IF;
        RETURN;
    END IF;
    IF v_policy ? 'roles' THEN
        IF NOT (p_actor->'roles' ?| ARRAY(SELECT jsonb_array_elements_text(v_policy->'roles'))) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH033',
                MESSAGE = format('Actor %L may not %s: the policy asks for one of the roles %s, and the actor has %s',
                                 p_actor->>'id', p_key, v_policy->'roles', p_actor->'roles'),
                HINT = 'Give the user one of those roles in the directory, or act as a user who has one.';
        END IF;
    END IF;
    IF v_policy ? 'rule' THEN
        v_result := charter.eval_expr(v_policy->'compiled',
            jsonb_build_object('entity', p_entity, 'actor', p_actor, 'org', p_org_data, 'context', p_context));
        IF v_result->'result' IS DISTINCT FROM 'true'::jsonb THEN
            RAISE EXCEPTION USING ERRCODE = 'CH033',
                MESSAGE = format('Actor %L may not %s: the policy rule %s is %s for %s',
                                 p_actor->>'id', p_key, v_policy->>'rule', v_result->'result',
                                 v_result->'variables'),
                HINT = 'The rule is part of the published contract; act as someone it allows.';
        END IF;
    END IF;
END;
$$;
