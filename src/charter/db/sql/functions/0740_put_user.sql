-- The org directory: users with roles, manager, email and phone, and the org's data that
-- expressions read as org.*. Every call is scoped to the calling org.
CREATE OR REPLACE FUNCTION charter.put_user(
    p_org_id text, p_user_id text, p_roles text[] DEFAULT '{}', p_manager_id text DEFAULT NULL,
    p_email text DEFAULT NULL, p_phone text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org  text := charter._acting_org(p_org_id);
    v_user charter.directory_users;
BEGIN
    IF p_user_id IS NULL OR length(p_user_id) NOT BETWEEN 1 AND 200 OR p_user_id = 'system'
       OR p_user_id LIKE 'service:%' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L cannot be a user id: ids are 1 to 200 characters, and system and service:NAME are reserved for the engine', p_user_id),
            HINT = 'Choose another user id.';
    END IF;
    INSERT INTO charter.directory_users AS u (org_id, user_id, roles, manager_id, email, phone)
    VALUES (v_org, p_user_id, coalesce(p_roles, '{}'), p_manager_id, p_email, p_phone)
    ON CONFLICT (org_id, user_id) DO UPDATE
       SET roles = EXCLUDED.roles, manager_id = EXCLUDED.manager_id, email = EXCLUDED.email,
           phone = EXCLUDED.phone, updated_at = now()
    RETURNING * INTO v_user;
    RETURN charter._directory_actor(v_org, v_user.user_id) - 'reserved';
END;
$$;
