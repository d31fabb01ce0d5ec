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
