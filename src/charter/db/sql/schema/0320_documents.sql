-- The one-column checks are domains: PostgreSQL keeps a domain's checks for the session,
-- where a table's CHECK is read back from its text in every statement that writes the table.
CREATE DOMAIN charter.document_id AS text
    CONSTRAINT document_id_is_not_empty CHECK (length(VALUE) BETWEEN 1 AND 200);
CREATE DOMAIN charter.document_version AS integer
    CONSTRAINT document_version_is_positive CHECK (VALUE >= 1);
CREATE DOMAIN charter.document_data AS jsonb
    CONSTRAINT document_data_is_an_object CHECK (jsonb_typeof(VALUE) = 'object');

CREATE TABLE charter.documents (
    id                  charter.document_id NOT NULL,
    org_id              text        NOT NULL,
    entity_type         text        NOT NULL,
    contract_version_id text        NOT NULL,
    version             charter.document_version NOT NULL,
    state               text        NOT NULL,
    data                charter.document_data NOT NULL,
    amended_from        text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    amended_by          text,
    CONSTRAINT documents_pkey PRIMARY KEY (org_id, id),
    CONSTRAINT documents_contract_fkey FOREIGN KEY (contract_version_id)
        REFERENCES charter.workflow_versions (id)
);

COMMENT ON TABLE charter.documents IS
    'Business documents, written only by charter.mutate(): the current version of each.';
COMMENT ON COLUMN charter.documents.amended_by IS
    'The document that amended this one (its amended_from); set once, and the document no longer changes.';

CREATE INDEX documents_org_entity_state_idx
    ON charter.documents (org_id, entity_type, state, updated_at DESC, id DESC);
CREATE INDEX documents_amended_from_idx ON charter.documents (org_id, amended_from)
    WHERE amended_from IS NOT NULL;
