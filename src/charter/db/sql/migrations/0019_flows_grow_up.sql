-- Flows grow up: steps that wait (for time, for an event, for a child flow) without holding
-- a worker, handlers that ask to be resumed later, and the claim's limits: priorities,
-- concurrency per key, rate limits per key.

-- A step's structural configuration (a sleep's duration, a wait's event key, the child
-- flow of a child step) and its tunable limits (priority, concurrency, rate limit).
ALTER TABLE charter.flow_steps
    ADD COLUMN config jsonb,
    ADD COLUMN opt_limits jsonb,
    DROP CONSTRAINT step_type_is_known,
    ADD CONSTRAINT step_type_is_known CHECK (step_type IN ('single', 'map', 'sleep', 'wait_event'));
ALTER TABLE charter.workflow_versions ADD COLUMN opt_limits jsonb;

-- A run's priority (client.start(priority=)) and, for a child run, where it was started.
ALTER TABLE charter.runs
    ADD COLUMN priority smallint,
    ADD COLUMN parent_run_id text,
    ADD COLUMN parent_step text,
    ADD COLUMN parent_task_index integer,
    ADD COLUMN child_key text,
    ADD CONSTRAINT run_priority_in_range CHECK (priority BETWEEN 0 AND 1000);
CREATE INDEX runs_parent_idx ON charter.runs (parent_run_id, parent_step, parent_task_index)
    WHERE parent_run_id IS NOT NULL;

-- What the claim needs travels in the task row: its priority, its concurrency key and
-- limit, its rate-limit bucket.
ALTER TABLE charter.tasks
    ADD COLUMN priority smallint NOT NULL DEFAULT 0,
    ADD COLUMN limit_key text,
    ADD COLUMN limit_max integer,
    ADD COLUMN rate_key text;

-- The claim order: a queued task counts as ready `priority` minutes earlier than it is, so
-- higher priorities go first and a task waits at most the gap to any later one. (Pure
-- arithmetic on minutes, so immutable whatever the time zone.)
CREATE FUNCTION charter._claim_order(p_available_at timestamptz, p_priority smallint, p_status text)
RETURNS timestamptz
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $$
    SELECT CASE WHEN p_priority > 0 AND p_status = 'queued'
                THEN p_available_at - p_priority * interval '1 minute'
                ELSE p_available_at END
$$;

DROP INDEX charter.tasks_claim_idx;
CREATE INDEX tasks_claim_idx ON charter.tasks
    (version_id, charter._claim_order(available_at, priority, status))
    WHERE status IN ('queued', 'started');
-- Counting the running tasks of a concurrency key.
CREATE INDEX tasks_limit_idx ON charter.tasks (limit_key)
    WHERE status = 'started' AND limit_key IS NOT NULL;

ALTER TABLE charter.step_executions
    DROP CONSTRAINT execution_status_is_known,
    ADD CONSTRAINT execution_status_is_known
        CHECK (status IN ('running', 'completed', 'failed', 'skipped', 'cancelled', 'retried',
                          'rescheduled', 'waiting'));

-- A wait_event step's task waiting for its event: send_event attaches the event and makes
-- the task claimable now.
CREATE TABLE charter.flow_event_waits (
    run_id      text        NOT NULL,
    step_slug   text        NOT NULL,
    task_index  integer     NOT NULL DEFAULT 0,
    org_id      text        NOT NULL,
    event_key   text        NOT NULL,
    timeout_at  timestamptz,
    event       jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT flow_event_waits_pkey PRIMARY KEY (run_id, step_slug, task_index)
);
CREATE INDEX flow_event_waits_key_idx ON charter.flow_event_waits (org_id, event_key)
    WHERE event IS NULL;
ALTER TABLE charter.flow_event_waits ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.flow_event_waits
    USING (org_id = current_setting('charter.org_id', true));

-- Token buckets of rate limits, shared by every worker: tokens as of refilled_at.
CREATE TABLE charter.rate_buckets (
    org_id      text             NOT NULL,
    bucket_key  text             NOT NULL,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL DEFAULT now(),
    CONSTRAINT rate_buckets_pkey PRIMARY KEY (org_id, bucket_key)
);
ALTER TABLE charter.rate_buckets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.rate_buckets
    USING (org_id = current_setting('charter.org_id', true));

-- Signatures that grew: the claim returns what a waiting step waited for, outcomes carry
-- directives (reschedule, child runs), a run has a priority and may have a parent.
DROP FUNCTION IF EXISTS charter.claim_tasks(text, text[], integer, integer);
DROP FUNCTION IF EXISTS charter.record_outcomes(bigint[], uuid[], jsonb[], jsonb[], boolean[], text, numeric[]);
DROP FUNCTION IF EXISTS charter._complete_one(bigint, uuid, jsonb, text, numeric);
DROP FUNCTION IF EXISTS charter.start_run(text, jsonb, text, text, text);
DROP FUNCTION IF EXISTS charter.start_runs(text, jsonb, text[], text, text);
DROP FUNCTION IF EXISTS charter.list_runs(text, text, integer, text);
