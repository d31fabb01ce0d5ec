-- The inbox's "closed in the last week" (at most 50) becomes every request the user decided
-- or that closed, a page at a time: charter.approvals_decided_for replaces it.
DROP FUNCTION IF EXISTS charter.approvals_closed_for(text, text, integer);
