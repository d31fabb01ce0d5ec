-- A worker claims one org's tasks at a time (charter.claim_tasks goes round the orgs that
-- have queued work): the claim index leads with the version and then the org, so one index
-- serves the claim of an org's due tasks and the walk from one org with queued tasks to the
-- next.
DROP INDEX charter.tasks_claim_idx;
CREATE INDEX tasks_claim_idx ON charter.tasks
    (version_id, org_id, charter._claim_order(available_at, priority, status))
    WHERE status IN ('queued', 'started');

-- The claim's limits are applied to one org's candidates.
DROP FUNCTION IF EXISTS charter._admit_limited(bigint[]);
