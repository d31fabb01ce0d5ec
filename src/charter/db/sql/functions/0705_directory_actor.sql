-- An actor as expressions see it: a user of the org's directory (which never holds the
-- reserved names, user_id_is_not_reserved), else _reserved_actor's.
CREATE OR REPLACE FUNCTION charter._directory_actor(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_actor jsonb;
BEGIN
    SELECT charter._actor_json(ROW(u.*)::charter.directory_users) INTO v_actor FROM charter.directory_users AS u
     WHERE u.org_id = p_org_id AND u.user_id = p_actor;
    RETURN coalesce(v_actor, charter._reserved_actor(p_org_id, p_actor));
END;
$$;
