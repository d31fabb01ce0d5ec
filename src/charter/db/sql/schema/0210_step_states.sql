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
    token           text,
    skipped_arrivals integer    NOT NULL DEFAULT 0,
    outcome         text,
    CONSTRAINT step_states_pkey PRIMARY KEY (run_id, step_slug, org_id),
    CONSTRAINT step_status_is_known
        CHECK (status IN ('waiting', 'ready', 'running', 'completed', 'skipped', 'failed', 'cancelled')),
    CONSTRAINT arrivals_within_required CHECK (arrivals BETWEEN 0 AND required),
    CONSTRAINT remaining_within_initial CHECK (remaining_tasks BETWEEN 0 AND initial_tasks),
    CONSTRAINT skipped_within_arrivals CHECK (skipped_arrivals BETWEEN 0 AND arrivals)
) WITH (fillfactor = 70);  -- room on each page, so that readiness updates are HOT

COMMENT ON TABLE charter.step_states IS
    'Readiness per (run, node): a node is ready when arrivals (skip arrivals included) = required; the node $end completes a flow''s run. Instance nodes carry their token and the outcome their arrivals brought.';
