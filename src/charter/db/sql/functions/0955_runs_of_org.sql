-- What the HTTP API needs beyond the client's calls: which of these runs belong to the org
-- (a run of another org is answered 404, as if it did not exist).
CREATE OR REPLACE FUNCTION charter.runs_of_org(p_org_id text, p_run_ids text[])
RETURNS text[]
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}') FROM charter.runs AS r
     WHERE r.id = ANY (p_run_ids) AND r.org_id = charter._acting_org(p_org_id)
$$;
