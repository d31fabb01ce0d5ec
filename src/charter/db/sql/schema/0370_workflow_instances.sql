CREATE TABLE charter.workflow_instances (
    id               text        NOT NULL,
    org_id           text        NOT NULL,
    entity_type      text        NOT NULL,
    document_id      text        NOT NULL,
    version_id       text        NOT NULL,
    document_version integer     NOT NULL,
    status           text        NOT NULL DEFAULT 'running',
    current_nodes    text[]      NOT NULL DEFAULT '{}',
    context          jsonb       NOT NULL DEFAULT '{}',
    cancel_reason    text,
    started_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    actor            text,
    epoch            integer     NOT NULL DEFAULT 1,
    error            jsonb,
    trace_id         text,
    CONSTRAINT workflow_instances_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT workflow_instances_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id),
    CONSTRAINT instance_status_is_known
        CHECK (status IN ('running', 'paused', 'completed', 'failed', 'cancelled')),
    CONSTRAINT finished_instances_have_completed_at
        CHECK ((status IN ('running', 'paused')) = (completed_at IS NULL))
);

COMMENT ON TABLE charter.workflow_instances IS
    'A document''s run through its workflow, pinned to a definition version and a document version; at most one active per document.';

CREATE UNIQUE INDEX workflow_instances_one_active_idx
    ON charter.workflow_instances (org_id, document_id) WHERE status IN ('running', 'paused');
CREATE INDEX workflow_instances_document_idx
    ON charter.workflow_instances (org_id, entity_type, document_id);
CREATE INDEX workflow_instances_status_idx
    ON charter.workflow_instances (org_id, status, updated_at);

