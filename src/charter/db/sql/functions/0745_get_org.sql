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
