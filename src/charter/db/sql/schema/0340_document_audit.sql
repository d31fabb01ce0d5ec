-- A domain rather than a CHECK, as for documents (0320).
CREATE DOMAIN charter.audit_via AS text
    CONSTRAINT audit_via_is_known CHECK (VALUE IN ('api', 'workflow', 'system'));

CREATE TABLE charter.document_audit (
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    org_id      text        NOT NULL,
    document_id text        NOT NULL,
    entity_type text        NOT NULL,
    version     integer     NOT NULL,
    action      text        NOT NULL,
    actor       text        NOT NULL,
    run_as      text        NOT NULL,
    via         charter.audit_via NOT NULL,
    node_id     text,
    reason      text,
    changes     jsonb       NOT NULL,
    trace_id    text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT document_audit_pkey PRIMARY KEY (id, org_id)
);

COMMENT ON TABLE charter.document_audit IS
    'One row per mutation: who (actor, run_as), what (action, changes), when (at), where (org), which (document, version), why (reason), how (via, and the workflow node) and under which trace (append-only).';

CREATE INDEX document_audit_document_idx ON charter.document_audit (org_id, document_id, id);
