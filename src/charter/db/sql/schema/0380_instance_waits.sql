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
    CONSTRAINT instance_waits_pkey PRIMARY KEY (run_id, node_id, org_id),
    CONSTRAINT wait_kind_is_known CHECK (kind IN ('timer', 'event', 'delivery', 'approval', 'handler', 'retry'))
);
CREATE INDEX instance_waits_due_idx ON charter.instance_waits (due_at) WHERE due_at IS NOT NULL;
-- Handler tasks, claimed one org at a time.
CREATE INDEX instance_waits_handler_idx ON charter.instance_waits (org_id, due_at)
    WHERE kind = 'handler' AND resume IS NULL;
CREATE INDEX instance_waits_event_idx ON charter.instance_waits (org_id, event_key)
    WHERE event_key IS NOT NULL;
