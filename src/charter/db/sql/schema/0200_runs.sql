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
    owner_id         text,
    generation_id    text,
    evolution_run_id text,
    usd_cost         numeric(16, 6) NOT NULL DEFAULT 0,
    priority         smallint,
    parent_run_id    text,
    parent_step      text,
    parent_task_index integer,
    child_key        text,
    reported         boolean NOT NULL DEFAULT false,
    CONSTRAINT runs_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT runs_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id),
    CONSTRAINT run_id_is_not_empty CHECK (length(id) BETWEEN 1 AND 200),
    CONSTRAINT run_status_is_known
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT finished_runs_have_finished_at CHECK ((status = 'running') = (finished_at IS NULL)),
    CONSTRAINT usd_cost_is_not_negative CHECK (usd_cost >= 0),
    CONSTRAINT run_priority_in_range CHECK (priority BETWEEN 0 AND 1000)
);

COMMENT ON TABLE charter.runs IS
    'One row per run: a projection of step_executions that charter.rebuild_run_projection() reproduces (WF-15).';

COMMENT ON COLUMN charter.runs.reported IS
    'A run its runner reports (create_invocation, update_invocation), not one charter executes.';

CREATE INDEX runs_workflow_status_idx ON charter.runs (workflow_slug, status, created_at);

-- Listing runs newest first, a page at a time, without a filter on the flow.
CREATE INDEX runs_created_idx ON charter.runs (created_at DESC, id DESC);

-- A run's child runs (ctx.start_child, child steps).
CREATE INDEX runs_parent_idx ON charter.runs (parent_run_id, parent_step, parent_task_index)
    WHERE parent_run_id IS NOT NULL;
