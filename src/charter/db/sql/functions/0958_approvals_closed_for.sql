-- The inbox's "recently closed": requests the user was asked to decide that closed in the
-- last p_days without waiting for them any more (approved, rejected, cancelled, voided —
-- with the reason, e.g. the document changed after the version they were shown).
CREATE OR REPLACE FUNCTION charter.approvals_closed_for(p_org_id text, p_user text, p_days integer DEFAULT 7)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._request_json(r) FROM charter.approval_requests AS r
     WHERE r.org_id = charter._acting_org(p_org_id) AND r.status <> 'pending' AND p_user = ANY (r.approvers)
       AND r.closed_at > now() - make_interval(days => greatest(coalesce(p_days, 7), 1))
     ORDER BY r.closed_at DESC, r.id
     LIMIT 50
$$;
