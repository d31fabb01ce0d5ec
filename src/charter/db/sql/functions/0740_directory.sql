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

CREATE OR REPLACE FUNCTION charter.get_user(p_org_id text, p_user_id text)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._directory_actor(charter._acting_org(p_org_id), p_user_id) - 'reserved'
$$;

CREATE OR REPLACE FUNCTION charter.remove_user(p_org_id text, p_user_id text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    DELETE FROM charter.directory_users AS u
     WHERE u.org_id = charter._acting_org(p_org_id) AND u.user_id = p_user_id;
    RETURN FOUND;
END;
$$;

CREATE OR REPLACE FUNCTION charter.users_with_role(p_org_id text, p_role text)
RETURNS text[]
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(array_agg(u.user_id ORDER BY u.user_id), '{}')
      FROM charter.directory_users AS u
     WHERE u.org_id = charter._acting_org(p_org_id) AND u.roles @> ARRAY[p_role]
$$;

CREATE OR REPLACE FUNCTION charter.put_org(p_org_id text, p_data jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
BEGIN
    IF jsonb_typeof(p_data) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = 'Org data must be a JSON object',
            HINT = 'Pass {"key": value, ...}; expressions read it as org.key.';
    END IF;
    INSERT INTO charter.directory_orgs AS o (org_id, data) VALUES (v_org, p_data)
    ON CONFLICT (org_id) DO UPDATE SET data = EXCLUDED.data, updated_at = now();
    RETURN p_data;
END;
$$;

CREATE OR REPLACE FUNCTION charter.get_org(p_org_id text)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT coalesce((SELECT o.data FROM charter.directory_orgs AS o
                      WHERE o.org_id = charter._acting_org(p_org_id)), '{}'::jsonb)
$$;
