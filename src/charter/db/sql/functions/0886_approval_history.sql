CREATE OR REPLACE FUNCTION charter.approval_history(p_org_id text, p_document_id text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._request_json(ROW(r.*)::charter.approval_requests) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.document_id = p_document_id
     ORDER BY r.created_at, r.id
$$;
