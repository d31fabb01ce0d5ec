CREATE TABLE charter.tasks (
    id             bigint      GENERATED ALWAYS AS IDENTITY,
    org_id         text        NOT NULL DEFAULT 'default',
    run_id         text        NOT NULL,
    workflow_slug  text        NOT NULL,
    step_slug      text        NOT NULL,
    task_index     integer     NOT NULL DEFAULT 0,
    status         text        NOT NULL DEFAULT 'queued',
    attempts       integer     NOT NULL DEFAULT 0,
    max_attempts   integer     NOT NULL,
    available_at   timestamptz,
    delivery_token uuid,
    worker_id      text,
    started_at     timestamptz,
    version_id     text        NOT NULL,
    priority       smallint    NOT NULL DEFAULT 0,
    limit_key      text,
    limit_max      integer,
    rate_key       text,
    CONSTRAINT tasks_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT tasks_run_step_index_unique UNIQUE (run_id, step_slug, task_index, org_id),
    CONSTRAINT task_status_is_known
        CHECK (status IN ('queued', 'started', 'completed', 'failed', 'cancelled')),
    CONSTRAINT waiting_tasks_have_available_at
        CHECK ((status IN ('queued', 'started')) = (available_at IS NOT NULL)),
    CONSTRAINT started_tasks_have_token CHECK (status <> 'started' OR delivery_token IS NOT NULL)
);

COMMENT ON TABLE charter.tasks IS
    'The queue: one small row per task not yet completed (a completed task is deleted; its receipt and evidence remain); available_at is when a queued task may run or a started task''s lease ends.';

-- The claim order: a queued task counts as ready `priority` minutes earlier than it is, so
-- higher priorities go first and a task waits at most the gap to any later one. The
-- minutes are subtracted in UTC (timestamptz - interval is only STABLE, as a day's length
-- depends on the time zone), so every operator is immutable and, with a SQL-standard body
-- and no SET clause, PostgreSQL inlines the expression in the index and the claim instead
-- of calling the function for every row.
CREATE FUNCTION charter._claim_order(p_available_at timestamptz, p_priority smallint, p_status text)
RETURNS timestamptz
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
RETURN CASE WHEN p_priority > 0 AND p_status = 'queued'
            THEN timezone(interval '0', timezone(interval '0', p_available_at) - p_priority * interval '1 minute')
            ELSE p_available_at END;

-- The claim query: one org's queued tasks whose time has come and started tasks whose lease
-- expired, of the versions a worker's code can run, in claim order; and the walk from one
-- org with queued tasks to the next. A task is queued or started exactly when it has an
-- available_at (waiting_tasks_have_available_at); the condition names available_at, not the
-- status, so that a statement that finds a started task by its key (a completion) cannot
-- prove it and read this index by org instead of the key.
CREATE INDEX tasks_claim_idx ON charter.tasks
    (version_id, org_id, charter._claim_order(available_at, priority, status))
    WHERE available_at IS NOT NULL;
-- Counting the running tasks of a concurrency key.
CREATE INDEX tasks_limit_idx ON charter.tasks (limit_key)
    WHERE status = 'started' AND limit_key IS NOT NULL;
