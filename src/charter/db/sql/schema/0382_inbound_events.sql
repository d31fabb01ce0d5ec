CREATE TABLE charter.inbound_events (
    org_id      text        NOT NULL,
    event_id    text        NOT NULL,
    event_key   text        NOT NULL,
    payload     jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_by text,
    consumed_at timestamptz,
    document_id text,
    CONSTRAINT inbound_events_pkey PRIMARY KEY (org_id, event_id)
);
COMMENT ON COLUMN charter.inbound_events.document_id IS
    'The document the event is for, when its sender named one: only that document''s waits take it.';
CREATE INDEX inbound_events_waiting_idx ON charter.inbound_events (org_id, event_key, created_at)
    WHERE consumed_at IS NULL;
