-- The runtime of contracted workflows (seed 002): document workflow instances run on the
-- execution core of flows (runs, step_states, step_executions, step_receipts). Added here:
-- tokens, skip arrivals and outcomes on readiness rows; running and skipped evidence rows
-- that only move forward; the waits of an instance (timers, events, deliveries,
-- approvals, handler tasks); inbound events; the side-effects outbox; approval requests;
-- the org's rule store; schedules; and a test clock.

ALTER TABLE charter.step_states ADD COLUMN token text;
ALTER TABLE charter.step_states ADD COLUMN skipped_arrivals integer NOT NULL DEFAULT 0;
ALTER TABLE charter.step_states ADD COLUMN outcome text;
ALTER TABLE charter.step_states DROP CONSTRAINT step_status_is_known;
ALTER TABLE charter.step_states ADD CONSTRAINT step_status_is_known
    CHECK (status IN ('waiting', 'ready', 'running', 'completed', 'skipped', 'failed', 'cancelled'));
ALTER TABLE charter.step_states ADD CONSTRAINT skipped_within_arrivals
    CHECK (skipped_arrivals BETWEEN 0 AND arrivals);
COMMENT ON TABLE charter.step_states IS
    'Readiness per (run, node): a node is ready when arrivals (skip arrivals included) = required; the node $end completes a flow''s run. Instance nodes carry their token and the outcome their arrivals brought.';

ALTER TABLE charter.step_executions ADD COLUMN token text;
ALTER TABLE charter.step_executions ADD COLUMN entity_version integer;
ALTER TABLE charter.step_executions ADD COLUMN node_type text;
ALTER TABLE charter.step_executions ADD COLUMN actor text;
ALTER TABLE charter.step_executions DROP CONSTRAINT execution_status_is_known;
ALTER TABLE charter.step_executions ADD CONSTRAINT execution_status_is_known
    CHECK (status IN ('running', 'completed', 'failed', 'skipped', 'cancelled', 'retried'));

ALTER TABLE charter.workflow_instances ADD COLUMN actor text;
ALTER TABLE charter.workflow_instances ADD COLUMN epoch integer NOT NULL DEFAULT 1;
ALTER TABLE charter.workflow_instances ADD COLUMN error jsonb;
ALTER TABLE charter.workflow_instances ADD COLUMN trace_id text;

-- Events: a document's events are applied in order, so the poll looks for the oldest
-- unfinished event of each document; a processing event's lease ends at next_retry_at.
DROP INDEX charter.document_events_poll_idx;
CREATE INDEX document_events_poll_idx ON charter.document_events (next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
CREATE INDEX document_events_unfinished_idx ON charter.document_events (org_id, document_id, id)
    WHERE status IN ('pending', 'processing', 'failed', 'dead_letter');
ALTER TABLE charter.document_events ADD COLUMN worker_id text;

CREATE TABLE charter.instance_waits (
    run_id         text        NOT NULL,
    node_id        text        NOT NULL,
    org_id         text        NOT NULL,
    token          text        NOT NULL,
    kind           text        NOT NULL,
    entity_version integer     NOT NULL,
    event_key      text,
    due_at         timestamptz,
    timeout_at     timestamptz,
    resume         jsonb,
    detail         jsonb       NOT NULL DEFAULT '{}',
    attempts       integer     NOT NULL DEFAULT 0,
    last_error     text,
    worker_id      text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT instance_waits_pkey PRIMARY KEY (run_id, node_id),
    CONSTRAINT wait_kind_is_known CHECK (kind IN ('timer', 'event', 'delivery', 'approval', 'handler', 'retry'))
);
CREATE INDEX instance_waits_due_idx ON charter.instance_waits (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX instance_waits_event_idx ON charter.instance_waits (org_id, event_key)
    WHERE event_key IS NOT NULL;
ALTER TABLE charter.instance_waits ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.instance_waits
    USING (org_id = current_setting('charter.org_id', true));

CREATE TABLE charter.inbound_events (
    org_id      text        NOT NULL,
    event_id    text        NOT NULL,
    event_key   text        NOT NULL,
    payload     jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_by text,
    consumed_at timestamptz,
    CONSTRAINT inbound_events_pkey PRIMARY KEY (org_id, event_id)
);
CREATE INDEX inbound_events_waiting_idx ON charter.inbound_events (org_id, event_key, created_at)
    WHERE consumed_at IS NULL;
ALTER TABLE charter.inbound_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.inbound_events
    USING (org_id = current_setting('charter.org_id', true));

CREATE SEQUENCE charter.side_effects_id_seq AS bigint;
CREATE TABLE charter.side_effects (
    id              bigint      NOT NULL DEFAULT nextval('charter.side_effects_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    org_id          text        NOT NULL,
    run_id          text        NOT NULL,
    node_id         text        NOT NULL,
    effect_type     text        NOT NULL,
    request         jsonb       NOT NULL,
    idempotency_key text        NOT NULL,
    trace_id        text,
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    max_attempts    integer     NOT NULL DEFAULT 8,
    next_retry_at   timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    response        jsonb,
    error           text,
    CONSTRAINT side_effects_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT effect_type_is_known CHECK (effect_type IN ('webhook', 'notification')),
    CONSTRAINT effect_status_is_known
        CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead_letter', 'cancelled'))
) PARTITION BY RANGE (created_at);
ALTER SEQUENCE charter.side_effects_id_seq OWNED BY charter.side_effects.id;
CREATE TABLE charter.side_effects_default PARTITION OF charter.side_effects DEFAULT;
CREATE INDEX side_effects_poll_idx ON charter.side_effects (next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
CREATE INDEX side_effects_run_idx ON charter.side_effects (run_id, node_id);
ALTER TABLE charter.side_effects ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.side_effects
    USING (org_id = current_setting('charter.org_id', true));

CREATE TABLE charter.approval_requests (
    id               text        NOT NULL DEFAULT gen_random_uuid()::text,
    org_id           text        NOT NULL,
    run_id           text        NOT NULL,
    node_id          text        NOT NULL,
    token            text        NOT NULL,
    document_id      text        NOT NULL,
    entity_version   integer     NOT NULL,
    snapshot_version integer     NOT NULL,
    config           jsonb       NOT NULL,
    status           text        NOT NULL DEFAULT 'pending',
    outcome_reason   text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    closed_at        timestamptz,
    CONSTRAINT approval_requests_pkey PRIMARY KEY (id),
    CONSTRAINT approval_status_is_known
        CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled', 'voided'))
);
CREATE INDEX approval_requests_document_idx ON charter.approval_requests (org_id, document_id, status);
CREATE INDEX approval_requests_run_idx ON charter.approval_requests (run_id, node_id);
ALTER TABLE charter.approval_requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_requests
    USING (org_id = current_setting('charter.org_id', true));

CREATE TABLE charter.rules (
    org_id      text        NOT NULL,
    rule_id     text        NOT NULL,
    version     integer     NOT NULL,
    expression  text        NOT NULL,
    ast         jsonb       NOT NULL,
    description text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT rules_pkey PRIMARY KEY (org_id, rule_id, version)
);
ALTER TABLE charter.rules ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.rules
    USING (org_id = current_setting('charter.org_id', true));

CREATE TABLE charter.schedules (
    org_id       text        NOT NULL,
    name         text        NOT NULL,
    cron         text        NOT NULL,
    timezone     text        NOT NULL DEFAULT 'UTC',
    target       jsonb       NOT NULL,
    missed       text        NOT NULL DEFAULT 'latest',
    next_at      timestamptz NOT NULL,
    last_tick_at timestamptz,
    last_result  jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedules_pkey PRIMARY KEY (org_id, name),
    CONSTRAINT schedule_missed_is_known CHECK (missed IN ('latest', 'all', 'skip'))
);
CREATE INDEX schedules_due_idx ON charter.schedules (next_at);
ALTER TABLE charter.schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.schedules
    USING (org_id = current_setting('charter.org_id', true));

-- The test clock: how far charter's now() runs ahead of the server's, for tests and demos.
CREATE TABLE charter.test_clock (
    id         boolean     NOT NULL DEFAULT true,
    org_id     text        NOT NULL DEFAULT 'default',
    ahead      interval    NOT NULL DEFAULT '0',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT test_clock_pkey PRIMARY KEY (id),
    CONSTRAINT test_clock_is_one_row CHECK (id),
    CONSTRAINT test_clock_only_moves_forward CHECK (ahead >= interval '0')
);
ALTER TABLE charter.test_clock ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.test_clock USING (true);
