-- How an actor looks to expressions: the directory's user (id, roles, manager, email,
-- phone), or a reserved actor (system, service:NAME) with no roles.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._actor_vars(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT coalesce(
            (SELECT jsonb_build_object('id', u.user_id, 'roles', to_jsonb(u.roles), 'manager', u.manager_id,
                                       'email', u.email, 'phone', u.phone)
               FROM charter.directory_users AS u WHERE u.org_id = p_org_id AND u.user_id = p_actor),
            jsonb_build_object('id', coalesce(p_actor, 'system'), 'roles', '[]'::jsonb))
    );
END;
$$;
