-- Retention (seed 002 § Partition Strategy, § Receipts Pruning): what is older than the
-- window is forgotten, never what a running instance or an undelivered effect still needs,
-- and never a document's evidence. Seed 002 keeps a document's evidence for good: its
-- versions, audit trail and approvals (retention never touches those tables), and its
-- instances' step executions, step receipts and side effects (delivered or not).
--   * flow runs completed or cancelled before the cutoff (not document instances; not a
--     child of a run kept, nor a parent of one) are forgotten whole: their evidence,
--     receipts, readiness, inbox, leftover tasks and event waits, then the run itself;
--   * outbox receipts written before the cutoff (dedup holds for every key inside the window);
--   * delivered (completed or cancelled) side effects that are not a document instance's,
--     and applied document events, finished before the cutoff;
--   * monthly partitions in schema charter that ended before the cutoff are detached and
--     dropped whole when they hold nothing kept — no document instance's row, no row of a
--     run not finished before the cutoff, no outbox row not delivered; a partition that
--     holds any is kept (and reported), and only its expired flow rows are deleted, row by
--     row. Partitions moved to schema charter_archive (archive_evidence) are never dropped.
-- One maintenance at a time (an advisory lock); returns a report.
-- Only the schema's owner may keep less than the deduplication window (90 days: an
-- idempotency key used inside it is still a duplicate); the worker role, which runs this
-- hourly, is refused with PERMISSION_DENIED rather than let a setting forget keys early.

-- The flow runs retention forgets at this cutoff: completed or cancelled before it, not a
-- document's instance, and neither a child of a run that is kept nor the parent of one.
CREATE OR REPLACE FUNCTION charter._expired_flow_runs(p_cutoff timestamptz)
RETURNS TABLE (run_id text, org_id text)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT u.id, u.org_id
      FROM charter.runs AS u
     WHERE u.status IN ('completed', 'cancelled') AND u.finished_at < p_cutoff
       AND NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                        WHERE i.id = u.id AND i.org_id = u.org_id)
       AND NOT EXISTS (SELECT 1 FROM charter.runs AS p
                        WHERE p.id = u.parent_run_id AND p.org_id = u.org_id
                          AND (p.status NOT IN ('completed', 'cancelled') OR p.finished_at >= p_cutoff
                               OR EXISTS (SELECT 1 FROM charter.workflow_instances AS pi
                                           WHERE pi.id = p.id AND pi.org_id = p.org_id)))
       AND NOT EXISTS (SELECT 1 FROM charter.runs AS c
                        WHERE c.parent_run_id = u.id AND c.org_id = u.org_id
                          AND (c.status NOT IN ('completed', 'cancelled') OR c.finished_at >= p_cutoff));
$$;
