CREATE TABLE charter.org_secrets (
    org_id         text        NOT NULL,
    webhook_secret text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT org_secrets_pkey PRIMARY KEY (org_id)
);
