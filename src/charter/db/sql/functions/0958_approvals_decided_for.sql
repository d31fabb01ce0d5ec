-- The inbox's decided and closed requests, a page at a time: requests p_user was asked to
-- decide that they decided (still pending for others, or closed) or that closed without them
-- (approved, rejected, cancelled, voided — with the reason, e.g. the document changed after
-- the version they were shown), the latest first (closed, else their decision). Each carries
-- 'mine': the user's own decision and comment, if any. p_limit from 1 to 100.
CREATE OR REPLACE FUNCTION charter.approvals_decided_for(
    p_org_id text, p_user text, p_limit integer DEFAULT 20, p_offset integer DEFAULT 0)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._request_json(ROW(r.*)::charter.approval_requests) || jsonb_build_object('mine', m.mine)
      FROM charter.approval_requests AS r
      LEFT JOIN LATERAL (
          SELECT jsonb_build_object('decision', d.decision, 'comment', d.comment, 'decidedAt', d.decided_at) AS mine,
                 d.decided_at
            FROM charter.approval_decisions AS d
           WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.actor = p_user
           ORDER BY d.id DESC LIMIT 1) AS m ON true
     WHERE r.org_id = charter._acting_org(p_org_id) AND p_user = ANY (r.approvers)
       AND (r.status <> 'pending' OR m.mine IS NOT NULL)
     ORDER BY coalesce(r.closed_at, m.decided_at) DESC, r.id
     LIMIT least(greatest(coalesce(p_limit, 20), 1), 100) OFFSET greatest(coalesce(p_offset, 0), 0)
$$;
