CREATE TABLE charter.document_versions (
    document_id text        NOT NULL,
    version     integer     NOT NULL,
    org_id      text        NOT NULL,
    state       text        NOT NULL,
    data        jsonb       NOT NULL,
    changes     jsonb       NOT NULL,
    action      text        NOT NULL,
    actor       text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT document_versions_pkey PRIMARY KEY (org_id, document_id, version)
);

COMMENT ON TABLE charter.document_versions IS
    'Every version of every document: an immutable snapshot and its changes against the one before (append-only).';
