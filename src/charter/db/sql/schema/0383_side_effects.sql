-- The side-effects outbox (WF-10), which is also seed 003's task queue: kind 'effect' rows
-- are retried by charter, kind 'task' rows run once for their supervisors.
CREATE SEQUENCE charter.side_effects_id_seq AS bigint;
CREATE TABLE charter.side_effects (
    id              bigint      NOT NULL DEFAULT nextval('charter.side_effects_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    org_id          text        NOT NULL,
    run_id          text,
    node_id         text,
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
    worker_id       text,
    kind            text        NOT NULL DEFAULT 'effect',
    dequeued_at     timestamptz,
    interventions   jsonb       NOT NULL DEFAULT '[]',
    CONSTRAINT side_effects_pkey PRIMARY KEY (created_at, id, org_id),
    CONSTRAINT side_effect_kind_is_known CHECK (kind IN ('effect', 'task')),
    CONSTRAINT effect_type_is_known
        CHECK (effect_type IN ('webhook', 'notification', 'email', 'sms', 'db_function')),
    CONSTRAINT effect_status_is_known
        CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead_letter', 'cancelled'))
) PARTITION BY RANGE (created_at);
ALTER SEQUENCE charter.side_effects_id_seq OWNED BY charter.side_effects.id;
CREATE TABLE charter.side_effects_default PARTITION OF charter.side_effects DEFAULT;
-- The claim, one org at a time (and the walk from one org with open rows to the next).
CREATE INDEX side_effects_poll_idx ON charter.side_effects (org_id, next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
CREATE INDEX side_effects_run_idx ON charter.side_effects (run_id, node_id);
CREATE INDEX side_effects_dead_letter_idx ON charter.side_effects (org_id, completed_at)
    WHERE status = 'dead_letter';
-- Answers find a row by its id alone (the primary key leads with created_at).
CREATE INDEX side_effects_id_idx ON charter.side_effects (id);
