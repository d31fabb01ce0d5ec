-- The test clock of each org: how far charter's now() runs ahead of the server's for that
-- org, for tests and demos.
CREATE TABLE charter.test_clock (
    org_id     text        NOT NULL,
    ahead      interval    NOT NULL DEFAULT '0',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT test_clock_only_moves_forward CHECK (ahead >= interval '0'),
    CONSTRAINT test_clock_pkey PRIMARY KEY (org_id)
);

COMMENT ON TABLE charter.test_clock IS
    'The test clock of each org: how far charter''s now() runs ahead of the server''s for that org, for tests and demos.';
