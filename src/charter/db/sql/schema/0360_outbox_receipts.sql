CREATE TABLE charter.outbox_receipts (
    org_id          text        NOT NULL,
    source          text        NOT NULL,
    idempotency_key text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_receipts_pkey PRIMARY KEY (org_id, source, idempotency_key),
    CONSTRAINT outbox_source_is_known CHECK (source IN ('events', 'side_effects'))
);

COMMENT ON TABLE charter.outbox_receipts IS
    'One row per outbox event ever written (WF-11): the dedup gate, append-only.';
