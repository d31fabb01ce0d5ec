-- The test clock: how far charter's now() runs ahead of the server's, for tests and demos.
CREATE TABLE charter.test_clock (
    id         boolean     NOT NULL DEFAULT true,
    org_id     text        NOT NULL DEFAULT 'default',
    ahead      interval    NOT NULL DEFAULT '0',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT test_clock_pkey PRIMARY KEY (id),
    CONSTRAINT test_clock_is_one_row CHECK (id),
    CONSTRAINT test_clock_only_moves_forward CHECK (ahead >= interval '0')
);
