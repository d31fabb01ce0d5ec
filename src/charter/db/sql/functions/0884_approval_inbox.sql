CREATE OR REPLACE FUNCTION charter.approval_inbox(p_org_id text, p_user text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._request_json(ROW(r.*)::charter.approval_requests) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.status = 'pending' AND p_user = ANY (r.approvers)
       AND NOT EXISTS (SELECT 1 FROM charter.approval_decisions AS d WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.actor = p_user)
     ORDER BY r.created_at, r.id
$$;
