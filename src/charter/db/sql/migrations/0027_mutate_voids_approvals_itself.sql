-- mutate() voids a changed document's unapplied approvals in the statement that records the
-- change (one statement per mutation for the version, audit row, event and voids), so the
-- helper it called for that has no caller left.
DROP FUNCTION IF EXISTS charter._void_approvals(text, text, integer);
