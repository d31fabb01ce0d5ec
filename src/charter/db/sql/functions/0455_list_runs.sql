-- Runs, newest first, optionally of one flow and one status, a page at a time: p_after is
-- the id of the last run of the previous page. An unknown status or cursor is refused.
-- p_org_id keeps to one org's runs (the HTTP API's and the dashboard's lists); a transaction
-- that set charter.org_id lists that org's runs only (another org named is ORG_MISMATCH).
CREATE OR REPLACE FUNCTION charter.list_runs(
    p_flow_slug text DEFAULT NULL,
    p_status text DEFAULT NULL,
    p_limit integer DEFAULT 100,
    p_after text DEFAULT NULL,
    p_org_id text DEFAULT NULL
)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_after charter.runs;
    v_after_org text;  -- looked up before the query, not nested in it (Citus)
    v_org   text := CASE WHEN p_org_id IS NOT NULL THEN charter._acting_org(p_org_id)
                         ELSE nullif(current_setting('charter.org_id', true), '') END;
BEGIN
    IF p_status IS NOT NULL AND p_status NOT IN ('running', 'completed', 'failed', 'cancelled') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L is not a run status', p_status),
            HINT = 'Use running, completed, failed or cancelled.';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('limit %s is out of range', p_limit),
            HINT = 'Use a limit from 1 to 10000, and after= to page.';
    END IF;
    IF p_after IS NOT NULL THEN
        -- Without an org (an operator's list), an id several orgs use is refused naming them.
        v_after_org := charter._run_org(p_after, v_org);
        SELECT * INTO v_after FROM charter.runs AS r
         WHERE r.id = p_after AND r.org_id = v_after_org;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH022',
                MESSAGE = format('after=%L names no run', p_after),
                HINT = 'Pass the id of the last run of the previous page.';
        END IF;
    END IF;
    RETURN QUERY
    SELECT charter.get_run(r.id, r.org_id)
      FROM charter.runs AS r
     WHERE (v_org IS NULL OR r.org_id = v_org)
       AND (p_flow_slug IS NULL OR r.workflow_slug = p_flow_slug)
       AND (p_status IS NULL OR r.status = p_status)
       AND (p_after IS NULL OR (r.created_at, r.id) < (v_after.created_at, v_after.id))
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT p_limit;
END;
$$;
