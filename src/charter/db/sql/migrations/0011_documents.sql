-- The documents kernel (seed 002): the org directory, documents with immutable versions and
-- an audit trail, the events outbox that mutate() writes for the engine, and published
-- definitions per org. Every table carries org_id; row-level security limits charter_app's
-- direct reads to the org its transaction names (charter.org_id).

-- Definitions: contracts travel with their envelope, org definitions are drafts until
-- published, and every definition kind has what it needs (seed 002 N2).
ALTER TABLE charter.workflow_versions ADD COLUMN status text NOT NULL DEFAULT 'published';
ALTER TABLE charter.workflow_versions ADD COLUMN org_id text NOT NULL DEFAULT 'default';
ALTER TABLE charter.workflow_versions ADD COLUMN entity_type text;
ALTER TABLE charter.workflow_versions ADD COLUMN contract jsonb;
ALTER TABLE charter.workflow_versions ADD COLUMN base_ref jsonb;
ALTER TABLE charter.workflow_versions ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE charter.workflow_versions
    ADD CONSTRAINT definition_status_is_known CHECK (status IN ('draft', 'published', 'archived'));
ALTER TABLE charter.workflow_versions
    ADD CONSTRAINT only_org_patches_are_drafts CHECK (status <> 'draft' OR definition_kind = 'org_patch');
ALTER TABLE charter.workflow_versions
    ADD CONSTRAINT org_patch_is_complete CHECK (
        definition_kind <> 'org_patch'
        OR (dsl IS NOT NULL AND base_ref IS NOT NULL AND entity_type IS NOT NULL AND compiled IS NULL));
ALTER TABLE charter.workflow_versions
    ADD CONSTRAINT effective_is_complete CHECK (
        definition_kind <> 'effective'
        OR (compiled IS NOT NULL AND compiled_hash IS NOT NULL AND entity_type IS NOT NULL));

CREATE INDEX workflow_versions_org_entity_idx
    ON charter.workflow_versions (org_id, entity_type, definition_kind, status)
    WHERE entity_type IS NOT NULL;

-- The org directory: who may act, with which roles, and the org data expressions read.
CREATE TABLE charter.directory_users (
    org_id     text        NOT NULL,
    user_id    text        NOT NULL,
    roles      text[]      NOT NULL DEFAULT '{}',
    manager_id text,
    email      text,
    phone      text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT directory_users_pkey PRIMARY KEY (org_id, user_id),
    CONSTRAINT user_id_is_not_reserved
        CHECK (user_id <> 'system' AND user_id NOT LIKE 'service:%' AND length(user_id) BETWEEN 1 AND 200)
);

COMMENT ON TABLE charter.directory_users IS
    'The org directory: users, their roles and manager, email and phone. Roles come from here, never from the caller.';

CREATE INDEX directory_users_roles_idx ON charter.directory_users USING gin (roles);

CREATE TABLE charter.directory_orgs (
    org_id     text        NOT NULL,
    data       jsonb       NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT directory_orgs_pkey PRIMARY KEY (org_id),
    CONSTRAINT org_data_is_an_object CHECK (jsonb_typeof(data) = 'object')
);

COMMENT ON TABLE charter.directory_orgs IS 'Org data that expressions read as org.*.';

-- Documents: the current version of each; every version is also in document_versions.
CREATE TABLE charter.documents (
    id                  text        NOT NULL,
    org_id              text        NOT NULL,
    entity_type         text        NOT NULL,
    contract_version_id text        NOT NULL,
    version             integer     NOT NULL,
    state               text        NOT NULL,
    data                jsonb       NOT NULL,
    amended_from        text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT documents_pkey PRIMARY KEY (org_id, id),
    CONSTRAINT documents_contract_fkey FOREIGN KEY (contract_version_id)
        REFERENCES charter.workflow_versions (id),
    CONSTRAINT document_id_is_not_empty CHECK (length(id) BETWEEN 1 AND 200),
    CONSTRAINT document_version_is_positive CHECK (version >= 1),
    CONSTRAINT document_data_is_an_object CHECK (jsonb_typeof(data) = 'object')
);

COMMENT ON TABLE charter.documents IS
    'Business documents, written only by charter.mutate(): the current version of each.';

CREATE INDEX documents_org_entity_state_idx
    ON charter.documents (org_id, entity_type, state, updated_at DESC, id DESC);
CREATE INDEX documents_amended_from_idx ON charter.documents (org_id, amended_from)
    WHERE amended_from IS NOT NULL;

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

CREATE TABLE charter.document_audit (
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    org_id      text        NOT NULL,
    document_id text        NOT NULL,
    entity_type text        NOT NULL,
    version     integer     NOT NULL,
    action      text        NOT NULL,
    actor       text        NOT NULL,
    run_as      text        NOT NULL,
    via         text        NOT NULL,
    node_id     text,
    reason      text,
    changes     jsonb       NOT NULL,
    trace_id    text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT document_audit_pkey PRIMARY KEY (id),
    CONSTRAINT audit_via_is_known CHECK (via IN ('api', 'workflow', 'system'))
);

COMMENT ON TABLE charter.document_audit IS
    'One row per mutation: who (actor, run_as), what (action, changes), when (at), where (org), which (document, version), why (reason), how (via, and the workflow node) and under which trace (append-only).';

CREATE INDEX document_audit_document_idx ON charter.document_audit (org_id, document_id, id);

-- The events outbox: what mutate() tells the engine, partitioned by month like the evidence.
CREATE SEQUENCE charter.document_events_id_seq AS bigint;

CREATE TABLE charter.document_events (
    id              bigint      NOT NULL DEFAULT nextval('charter.document_events_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    org_id          text        NOT NULL,
    document_id     text        NOT NULL,
    entity_type     text        NOT NULL,
    entity_version  integer     NOT NULL,
    event_type      text        NOT NULL,
    payload         jsonb       NOT NULL DEFAULT '{}',
    idempotency_key text        NOT NULL,
    trace_id        text        NOT NULL,
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    max_attempts    integer     NOT NULL DEFAULT 5,
    next_retry_at   timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    error           text,
    CONSTRAINT document_events_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT event_type_is_known CHECK (event_type IN (
        'on_create', 'on_lifecycle_transition', 'on_mutation', 'on_amendment', 'on_amended')),
    CONSTRAINT event_status_is_known
        CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead_letter'))
) PARTITION BY RANGE (created_at);

ALTER SEQUENCE charter.document_events_id_seq OWNED BY charter.document_events.id;

COMMENT ON TABLE charter.document_events IS
    'The events outbox written by mutate() in the same transaction (on_create, on_lifecycle_transition, on_mutation, on_amendment, on_amended), consumed by the engine. Partitioned by month.';

CREATE INDEX document_events_poll_idx ON charter.document_events (status, next_retry_at, created_at)
    WHERE status IN ('pending', 'failed');
CREATE INDEX document_events_document_idx ON charter.document_events (org_id, document_id);

CREATE TABLE charter.document_events_default PARTITION OF charter.document_events DEFAULT;

-- Global dedup of outbox events (WF-11): a partitioned table cannot hold a global UNIQUE.
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

-- Row-level security: the org a transaction names (SET charter.org_id) is all it sees.
ALTER TABLE charter.directory_users ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.directory_orgs ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.document_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.outbox_receipts ENABLE ROW LEVEL SECURITY;

CREATE POLICY org_isolation ON charter.directory_users
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.directory_orgs
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.documents
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_versions
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_audit
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.document_events
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.outbox_receipts
    USING (org_id = current_setting('charter.org_id', true));
