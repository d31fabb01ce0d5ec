CREATE TABLE charter.workflows (
    slug               text        NOT NULL,
    org_id             text        NOT NULL DEFAULT 'default',
    description        text,
    owner_id           text,
    current_version_id text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT workflows_pkey PRIMARY KEY (slug),
    CONSTRAINT slug_is_not_empty CHECK (length(slug) BETWEEN 1 AND 200)
);

COMMENT ON TABLE charter.workflows IS
    'A workflow (a flow, or a document workflow); current_version_id is the version new runs start on.';
