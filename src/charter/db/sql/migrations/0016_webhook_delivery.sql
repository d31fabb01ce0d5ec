-- Webhook delivery (seed 003 channels): each org signs its webhooks with its own secret.
CREATE TABLE charter.org_secrets (
    org_id         text        NOT NULL,
    webhook_secret text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT org_secrets_pkey PRIMARY KEY (org_id)
);
ALTER TABLE charter.org_secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.org_secrets
    USING (org_id = current_setting('charter.org_id', true));

ALTER TABLE charter.side_effects ADD COLUMN worker_id text;
