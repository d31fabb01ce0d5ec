CREATE OR REPLACE FUNCTION charter.list_schedules(p_org_id text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._schedule_json(ROW(s.*)::charter.schedules) FROM charter.schedules AS s
     WHERE s.org_id = charter._acting_org(p_org_id) ORDER BY s.name
$$;
