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
