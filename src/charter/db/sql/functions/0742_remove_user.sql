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
