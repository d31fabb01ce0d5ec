-- Who may approve (segregation of duties): a request records whom it left out of its
-- approvers and why (the requester, the authors of the changes since the last approved
-- version, the deciders of a chain's earlier stages), and a chain may say that one person
-- may decide several of its stages.
ALTER TABLE charter.approval_requests ADD COLUMN excluded jsonb NOT NULL DEFAULT '{}';
ALTER TABLE charter.approval_chains ADD COLUMN allow_same_approver boolean NOT NULL DEFAULT false;

-- define_approval_chain takes the chain's option: its three-argument form is replaced.
DROP FUNCTION IF EXISTS charter.define_approval_chain(text, text, jsonb);

-- Requests pending from before: their requester leaves their approvers, as a new request's
-- would, where another approver has still to decide (an `all` request then closes on the
-- others' decisions, and the requester's inbox no longer lists it).
UPDATE charter.approval_requests AS r
   SET approvers = array_remove(r.approvers, r.requester),
       excluded = jsonb_build_object(r.requester, 'requester')
 WHERE r.status = 'pending' AND r.requester = ANY (r.approvers)
   AND EXISTS (SELECT 1 FROM unnest(r.approvers) AS a
                WHERE a <> r.requester
                  AND NOT EXISTS (SELECT 1 FROM charter.approval_decisions AS d
                                   WHERE d.request_id = r.id AND d.org_id = r.org_id AND d.actor = a));
