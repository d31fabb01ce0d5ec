-- A worker claims one org's tasks at a time (charter.claim_tasks goes round the orgs that
-- have queued work): the claim index leads with the version and then the org, so one index
-- serves the claim of an org's due tasks and the walk from one org with queued tasks to the
-- next. It holds the same rows as before (a task is queued or started exactly when it has an
-- available_at), named so that a statement that finds a started task by its key cannot
-- prove the index's condition and read the index by org instead of the key.
DROP INDEX charter.tasks_claim_idx;
CREATE INDEX tasks_claim_idx ON charter.tasks
    (version_id, org_id, charter._claim_order(available_at, priority, status))
    WHERE available_at IS NOT NULL;

-- The claim's limits are applied to one org's candidates.
DROP FUNCTION IF EXISTS charter._admit_limited(bigint[]);

-- The outboxes and the handler tasks are claimed one org at a time too: their claim indexes
-- lead with the org.
DROP INDEX charter.side_effects_poll_idx;
CREATE INDEX side_effects_poll_idx ON charter.side_effects (org_id, next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
DROP INDEX charter.document_events_poll_idx;
CREATE INDEX document_events_poll_idx ON charter.document_events (org_id, next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
CREATE INDEX instance_waits_handler_idx ON charter.instance_waits (org_id, due_at)
    WHERE kind = 'handler' AND resume IS NULL;
