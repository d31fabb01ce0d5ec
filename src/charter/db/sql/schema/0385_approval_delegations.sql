CREATE TABLE charter.approval_delegations (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    from_user  text        NOT NULL,
    to_user    text        NOT NULL,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_delegations_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT delegation_window_is_forward CHECK (ends_at > starts_at),
    CONSTRAINT delegation_is_to_someone_else CHECK (from_user <> to_user)
);
CREATE INDEX approval_delegations_user_idx ON charter.approval_delegations (org_id, from_user, starts_at);
