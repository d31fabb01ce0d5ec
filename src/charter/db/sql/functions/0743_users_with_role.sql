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
