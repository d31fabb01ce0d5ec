CREATE TABLE charter.approval_chains (
    org_id     text        NOT NULL,
    chain_id   text        NOT NULL,
    version    integer     NOT NULL,
    stages     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    allow_same_approver boolean NOT NULL DEFAULT false,
    CONSTRAINT approval_chains_pkey PRIMARY KEY (org_id, chain_id, version),
    CONSTRAINT chain_has_stages CHECK (jsonb_typeof(stages) = 'array' AND jsonb_array_length(stages) > 0)
);
