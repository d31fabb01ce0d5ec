-- A domain rather than a CHECK, as for documents (0320).
CREATE DOMAIN charter.outbox_source AS text
    CONSTRAINT outbox_source_is_known CHECK (VALUE IN ('events', 'side_effects'));

CREATE TABLE charter.outbox_receipts (
    org_id          text        NOT NULL,
    source          charter.outbox_source NOT NULL,
    idempotency_key text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_receipts_pkey PRIMARY KEY (org_id, source, idempotency_key)
);

COMMENT ON TABLE charter.outbox_receipts IS
    'One row per outbox event ever written (WF-11): the dedup gate, append-only.';
