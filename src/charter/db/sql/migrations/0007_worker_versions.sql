-- Workers claim only the tasks of versions whose shape their code matches, so a rolling
-- deploy runs every run with its own version's code: tasks carry their run's version and
-- the claim index is keyed by it; workers record the versions they serve and their lease.

ALTER TABLE charter.tasks ADD COLUMN version_id text;
UPDATE charter.tasks AS t SET version_id = r.version_id FROM charter.runs AS r WHERE r.id = t.run_id;
DELETE FROM charter.tasks WHERE version_id IS NULL;  -- tasks of runs that no longer exist
ALTER TABLE charter.tasks ALTER COLUMN version_id SET NOT NULL;

DROP INDEX charter.tasks_claim_idx;
CREATE INDEX tasks_claim_idx ON charter.tasks (version_id, available_at)
    WHERE status IN ('queued', 'started');

ALTER TABLE charter.workers ADD COLUMN versions text[] NOT NULL DEFAULT '{}';
ALTER TABLE charter.workers ADD COLUMN lease_seconds integer NOT NULL DEFAULT 30;
ALTER TABLE charter.workers
    ADD CONSTRAINT worker_lease_is_positive CHECK (lease_seconds >= 1);

-- Signatures that change: the function files create the new ones.
DROP FUNCTION IF EXISTS charter.claim_tasks(text, text[], integer, integer);
DROP FUNCTION IF EXISTS charter.register_worker(text, text, integer, text[], integer);

COMMENT ON TABLE charter.workers IS
    'Workers register at start and heartbeat; versions are the flow versions their code can run; stopped_at is set on a clean exit.';
