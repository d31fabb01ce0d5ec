-- Whether a policy surely lets the actor act without _check_policy: no policy, a reserved
-- actor, or a policy of roles alone (no rule) one of which the actor has. A SQL-standard
-- body without a SET clause: PostgreSQL inlines it, so mutate() calls _check_policy only for
-- a rule or a refusal, which _check_policy decides and explains. STABLE, as
-- jsonb_build_object is: PostgreSQL does not inline an IMMUTABLE function that calls one.
CREATE OR REPLACE FUNCTION charter._policy_passes(p_policy jsonb, p_actor jsonb)
RETURNS boolean
LANGUAGE sql
STABLE
RETURN p_policy IS NULL
    OR coalesce((p_actor->>'reserved')::boolean, false)
    OR (NOT p_policy ? 'rule'
        AND (NOT p_policy ? 'roles'
             OR (jsonb_typeof(p_policy->'roles') = 'array'
                 -- Strict, errors silent (NULL, so coalesced): a role that is not a string
                 -- matches nothing here.
                 AND coalesce(jsonb_path_exists(p_actor, 'strict $.roles[*] ? (@ == $roles[*])',
                                                jsonb_build_object('roles', p_policy->'roles'), true),
                              false))));
