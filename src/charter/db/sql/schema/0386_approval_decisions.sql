CREATE TABLE charter.approval_decisions (
    id             bigint      GENERATED ALWAYS AS IDENTITY,
    org_id         text        NOT NULL,
    request_id     text        NOT NULL,
    document_id    text        NOT NULL,
    actor          text        NOT NULL,
    decision       text        NOT NULL,
    entity_version integer     NOT NULL,
    comment        text,
    decided_at     timestamptz NOT NULL DEFAULT now(),
    applied_at     timestamptz,
    applied_by     text,
    voided_at      timestamptz,
    voided_version integer,
    CONSTRAINT approval_decisions_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT approval_decision_is_known CHECK (decision IN ('approved', 'rejected', 'abstained')),
    CONSTRAINT one_decision_per_approver UNIQUE (request_id, actor, org_id),
    CONSTRAINT applied_or_voided_not_both CHECK (applied_at IS NULL OR voided_at IS NULL)
);
CREATE INDEX approval_decisions_open_idx ON charter.approval_decisions (org_id, document_id)
    WHERE applied_at IS NULL AND voided_at IS NULL;
