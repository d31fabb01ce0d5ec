CREATE OR REPLACE FUNCTION charter.get_user(p_org_id text, p_user_id text)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._directory_actor(charter._acting_org(p_org_id), p_user_id) - 'reserved'
$$;
