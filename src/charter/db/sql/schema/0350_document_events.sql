-- Domains rather than CHECKs, as for documents (0320).
CREATE DOMAIN charter.event_type AS text
    CONSTRAINT event_type_is_known CHECK (VALUE IN (
        'on_create', 'on_lifecycle_transition', 'on_mutation', 'on_amendment', 'on_amended'));
CREATE DOMAIN charter.event_status AS text
    CONSTRAINT event_status_is_known
        CHECK (VALUE IN ('pending', 'processing', 'completed', 'failed', 'dead_letter'));

CREATE SEQUENCE charter.document_events_id_seq AS bigint;

CREATE TABLE charter.document_events (
    id              bigint      NOT NULL DEFAULT nextval('charter.document_events_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    org_id          text        NOT NULL,
    document_id     text        NOT NULL,
    entity_type     text        NOT NULL,
    entity_version  integer     NOT NULL,
    event_type      charter.event_type NOT NULL,
    payload         jsonb       NOT NULL DEFAULT '{}',
    idempotency_key text        NOT NULL,
    trace_id        text        NOT NULL,
    status          charter.event_status NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    max_attempts    integer     NOT NULL DEFAULT 5,
    next_retry_at   timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    error           text,
    worker_id       text,
    CONSTRAINT document_events_pkey PRIMARY KEY (created_at, id, org_id)
) PARTITION BY RANGE (created_at);

ALTER SEQUENCE charter.document_events_id_seq OWNED BY charter.document_events.id;

COMMENT ON TABLE charter.document_events IS
    'The events outbox written by mutate() in the same transaction (on_create, on_lifecycle_transition, on_mutation, on_amendment, on_amended), consumed by the engine. Partitioned by month.';

-- A document's events are applied in order: the poll looks for the oldest unfinished event
-- of each document; a processing event's lease ends at next_retry_at. It is claimed one org
-- at a time (and the claim walks from one org with open events to the next).
CREATE INDEX document_events_poll_idx ON charter.document_events (org_id, next_retry_at, created_at)
    WHERE status IN ('pending', 'processing', 'failed');
CREATE INDEX document_events_unfinished_idx ON charter.document_events (org_id, document_id, id)
    WHERE status IN ('pending', 'processing', 'failed', 'dead_letter');
CREATE INDEX document_events_document_idx ON charter.document_events (org_id, document_id);

CREATE TABLE charter.document_events_default PARTITION OF charter.document_events DEFAULT;
