-- A request's outcome from its decisions: rejected as soon as anyone rejects; approved when
-- one approves (any) or when every approver has decided and at least one approved with no
-- rejection (all; abstentions count as neither); else still pending.
CREATE OR REPLACE FUNCTION charter._request_outcome(p_request charter.approval_requests)
RETURNS text
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT CASE
        WHEN bool_or(d.decision = 'rejected') THEN 'rejected'
        WHEN p_request.decision = 'any' AND bool_or(d.decision = 'approved') THEN 'approved'
        WHEN p_request.decision = 'all' AND count(*) = cardinality(p_request.approvers)
             AND bool_or(d.decision = 'approved') THEN 'approved'
        WHEN p_request.decision = 'all' AND count(*) = cardinality(p_request.approvers) THEN 'rejected'
        ELSE 'pending' END
      FROM charter.approval_decisions AS d
     WHERE d.request_id = p_request.id AND d.org_id = p_request.org_id AND d.voided_at IS NULL
$$;
