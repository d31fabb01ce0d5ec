-- Approvals bound to a version (seed 002 WF-03): each request keeps the approvers it resolved
-- when its node started, its decision rule and who asked; decisions are append-only rows
-- whose only later changes are being applied by a gate, or voided by a change of the
-- document (each once, recorded with when and by what).

ALTER TABLE charter.approval_requests ADD COLUMN approvers text[] NOT NULL DEFAULT '{}';
ALTER TABLE charter.approval_requests ADD COLUMN decision text NOT NULL DEFAULT 'any';
ALTER TABLE charter.approval_requests ADD COLUMN requester text;
ALTER TABLE charter.approval_requests ADD COLUMN voided_version integer;
ALTER TABLE charter.approval_requests ADD COLUMN delegated jsonb NOT NULL DEFAULT '{}';
ALTER TABLE charter.approval_requests ADD COLUMN escalated_at timestamptz;
ALTER TABLE charter.approval_requests
    ADD CONSTRAINT approval_decision_rule_is_known CHECK (decision IN ('any', 'all'));

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
    CONSTRAINT approval_decisions_pkey PRIMARY KEY (id),
    CONSTRAINT approval_decision_is_known CHECK (decision IN ('approved', 'rejected', 'abstained')),
    CONSTRAINT one_decision_per_approver UNIQUE (request_id, actor),
    CONSTRAINT applied_or_voided_not_both CHECK (applied_at IS NULL OR voided_at IS NULL)
);
CREATE INDEX approval_decisions_open_idx ON charter.approval_decisions (org_id, document_id)
    WHERE applied_at IS NULL AND voided_at IS NULL;
ALTER TABLE charter.approval_decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_decisions
    USING (org_id = current_setting('charter.org_id', true));

-- Approval chains: per org, versioned; a chain-backed approval node pins a version.
CREATE TABLE charter.approval_chains (
    org_id     text        NOT NULL,
    chain_id   text        NOT NULL,
    version    integer     NOT NULL,
    stages     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_chains_pkey PRIMARY KEY (org_id, chain_id, version),
    CONSTRAINT chain_has_stages CHECK (jsonb_typeof(stages) = 'array' AND jsonb_array_length(stages) > 0)
);
ALTER TABLE charter.approval_chains ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_chains
    USING (org_id = current_setting('charter.org_id', true));

-- Delegations: while one is in force, requests made for its user go to the delegate.
CREATE TABLE charter.approval_delegations (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    from_user  text        NOT NULL,
    to_user    text        NOT NULL,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_delegations_pkey PRIMARY KEY (id),
    CONSTRAINT delegation_window_is_forward CHECK (ends_at > starts_at),
    CONSTRAINT delegation_is_to_someone_else CHECK (from_user <> to_user)
);
CREATE INDEX approval_delegations_user_idx ON charter.approval_delegations (org_id, from_user, starts_at);
ALTER TABLE charter.approval_delegations ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.approval_delegations
    USING (org_id = current_setting('charter.org_id', true));
