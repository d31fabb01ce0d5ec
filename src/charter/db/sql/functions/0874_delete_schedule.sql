CREATE OR REPLACE FUNCTION charter.delete_schedule(p_org_id text, p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    DELETE FROM charter.schedules AS s WHERE s.org_id = charter._acting_org(p_org_id) AND s.name = p_name;
    RETURN FOUND;
END;
$$;
