-- The execution core: runs, per-node readiness, the inbox, the task queue, evidence,
-- receipts and workers. Hot tables carry no foreign keys: the charter.* functions are
-- their only writers and keep them consistent, and each insert skips a lookup.

CREATE TABLE charter.runs (
    id            text        NOT NULL,
    org_id        text        NOT NULL DEFAULT 'default',
    workflow_slug text        NOT NULL,
    version_id    text        NOT NULL,
    status        text        NOT NULL DEFAULT 'running',
    input         jsonb       NOT NULL,
    output        jsonb,
    error         jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT runs_pkey PRIMARY KEY (id),
    CONSTRAINT runs_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id),
    CONSTRAINT run_id_is_not_empty CHECK (length(id) BETWEEN 1 AND 200),
    CONSTRAINT run_status_is_known
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT finished_runs_have_finished_at CHECK ((status = 'running') = (finished_at IS NULL))
);

COMMENT ON TABLE charter.runs IS
    'One row per run: a projection of step_executions that charter.rebuild_run_projection() reproduces (WF-15).';

CREATE INDEX runs_workflow_status_idx ON charter.runs (workflow_slug, status, created_at);

CREATE TABLE charter.step_states (
    run_id          text        NOT NULL,
    step_slug       text        NOT NULL,
    org_id          text        NOT NULL DEFAULT 'default',
    status          text        NOT NULL DEFAULT 'waiting',
    required        integer     NOT NULL,
    arrivals        integer     NOT NULL DEFAULT 0,
    initial_tasks   integer,
    remaining_tasks integer,
    ready_at        timestamptz,
    completed_at    timestamptz,
    CONSTRAINT step_states_pkey PRIMARY KEY (run_id, step_slug),
    CONSTRAINT step_status_is_known
        CHECK (status IN ('waiting', 'ready', 'completed', 'failed', 'cancelled')),
    CONSTRAINT arrivals_within_required CHECK (arrivals BETWEEN 0 AND required),
    CONSTRAINT remaining_within_initial CHECK (remaining_tasks BETWEEN 0 AND initial_tasks)
);

COMMENT ON TABLE charter.step_states IS
    'Readiness per (run, node): a node is ready when arrivals = required; the node $end completes the run.';

CREATE TABLE charter.inbox (
    run_id       text        NOT NULL,
    target_step  text        NOT NULL,
    source_step  text        NOT NULL,
    spread_index integer     NOT NULL DEFAULT -1,
    org_id       text        NOT NULL DEFAULT 'default',
    value        jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT inbox_pkey PRIMARY KEY (run_id, target_step, source_step, spread_index)
);

COMMENT ON TABLE charter.inbox IS
    'Inputs waiting for a node: a dependency''s output (spread_index -1) or one map element''s result (its index).';

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
    CONSTRAINT tasks_pkey PRIMARY KEY (id),
    CONSTRAINT tasks_run_step_index_unique UNIQUE (run_id, step_slug, task_index),
    CONSTRAINT task_status_is_known
        CHECK (status IN ('queued', 'started', 'completed', 'failed', 'cancelled')),
    CONSTRAINT waiting_tasks_have_available_at
        CHECK ((status IN ('queued', 'started')) = (available_at IS NOT NULL)),
    CONSTRAINT started_tasks_have_token CHECK (status <> 'started' OR delivery_token IS NOT NULL)
);

COMMENT ON TABLE charter.tasks IS
    'The queue: one small row per task; available_at is when a queued task may run or a started task''s lease ends.';

-- The claim query: queued tasks whose time has come and started tasks whose lease expired.
CREATE INDEX tasks_claim_idx ON charter.tasks (workflow_slug, available_at)
    WHERE status IN ('queued', 'started');

CREATE SEQUENCE charter.step_executions_id_seq AS bigint;

CREATE TABLE charter.step_executions (
    id              bigint      NOT NULL DEFAULT nextval('charter.step_executions_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    org_id          text        NOT NULL DEFAULT 'default',
    run_id          text        NOT NULL,
    step_slug       text        NOT NULL,
    task_index      integer     NOT NULL DEFAULT 0,
    attempt         integer     NOT NULL DEFAULT 0,
    status          text        NOT NULL,
    terminal        boolean     NOT NULL DEFAULT false,
    idempotency_key text,
    worker_id       text,
    started_at      timestamptz,
    finished_at     timestamptz NOT NULL DEFAULT now(),
    output          jsonb,
    error           jsonb,
    CONSTRAINT step_executions_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT execution_status_is_known
        CHECK (status IN ('completed', 'failed', 'cancelled', 'retried'))
) PARTITION BY RANGE (created_at);

ALTER SEQUENCE charter.step_executions_id_seq OWNED BY charter.step_executions.id;

COMMENT ON TABLE charter.step_executions IS
    'Evidence, append-only: one row per finished attempt (completed or failed), plus $run rows for cancel and retry. Partitioned by month.';

CREATE INDEX step_executions_run_idx ON charter.step_executions (run_id, step_slug, task_index);

-- Catches rows for a month whose partition was not created in time; charter.ensure_partitions()
-- creates the monthly ones ahead.
CREATE TABLE charter.step_executions_default PARTITION OF charter.step_executions DEFAULT;

CREATE TABLE charter.step_receipts (
    run_id          text        NOT NULL,
    idempotency_key text        NOT NULL,
    org_id          text        NOT NULL DEFAULT 'default',
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT step_receipts_pkey PRIMARY KEY (run_id, idempotency_key)
);

COMMENT ON TABLE charter.step_receipts IS
    'Global dedup of step completions (WF-02): one row per (run, step, task index) ever completed.';

CREATE TABLE charter.workers (
    id                text        NOT NULL,
    org_id            text        NOT NULL DEFAULT 'default',
    hostname          text        NOT NULL,
    pid               integer     NOT NULL,
    flows             text[]      NOT NULL,
    concurrency       integer     NOT NULL,
    started_at        timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at        timestamptz,
    CONSTRAINT workers_pkey PRIMARY KEY (id)
);

COMMENT ON TABLE charter.workers IS
    'Workers register at start and heartbeat; stopped_at is set on a clean exit.';
