CREATE TABLE charter.step_receipts (
    run_id          text        NOT NULL,
    idempotency_key text        NOT NULL,
    org_id          text        NOT NULL DEFAULT 'default',
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT step_receipts_pkey PRIMARY KEY (run_id, idempotency_key, org_id)
);

COMMENT ON TABLE charter.step_receipts IS
    'Global dedup of step completions (WF-02): one row per (run, step, task index) ever completed.';
