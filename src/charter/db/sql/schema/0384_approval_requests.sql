CREATE TABLE charter.approval_requests (
    id               text        NOT NULL DEFAULT gen_random_uuid()::text,
    org_id           text        NOT NULL,
    run_id           text        NOT NULL,
    node_id          text        NOT NULL,
    token            text        NOT NULL,
    document_id      text        NOT NULL,
    entity_version   integer     NOT NULL,
    snapshot_version integer     NOT NULL,
    config           jsonb       NOT NULL,
    status           text        NOT NULL DEFAULT 'pending',
    outcome_reason   text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    closed_at        timestamptz,
    approvers        text[]      NOT NULL DEFAULT '{}',
    decision         text        NOT NULL DEFAULT 'any',
    requester        text,
    voided_version   integer,
    delegated        jsonb       NOT NULL DEFAULT '{}',
    escalated_at     timestamptz,
    excluded         jsonb       NOT NULL DEFAULT '{}',
    CONSTRAINT approval_requests_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT approval_status_is_known
        CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled', 'voided')),
    CONSTRAINT approval_decision_rule_is_known CHECK (decision IN ('any', 'all'))
);
CREATE INDEX approval_requests_document_idx ON charter.approval_requests (org_id, document_id, status);
CREATE INDEX approval_requests_run_idx ON charter.approval_requests (run_id, node_id);
