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
    token           text,
    entity_version  integer,
    node_type       text,
    actor           text,
    CONSTRAINT step_executions_pkey PRIMARY KEY (created_at, id, org_id),
    CONSTRAINT execution_status_is_known
        CHECK (status IN ('running', 'completed', 'failed', 'skipped', 'cancelled', 'retried',
                          'rescheduled', 'waiting'))
) PARTITION BY RANGE (created_at);

ALTER SEQUENCE charter.step_executions_id_seq OWNED BY charter.step_executions.id;

COMMENT ON TABLE charter.step_executions IS
    'Evidence, append-only: one row per finished attempt (completed or failed), plus $run rows for cancel and retry. Partitioned by month.';

CREATE INDEX step_executions_run_idx ON charter.step_executions (run_id, step_slug, task_index);

-- Catches rows for a month whose partition was not created in time; charter.ensure_partitions()
-- creates the monthly ones ahead.
CREATE TABLE charter.step_executions_default PARTITION OF charter.step_executions DEFAULT;
