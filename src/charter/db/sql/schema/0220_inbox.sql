CREATE TABLE charter.inbox (
    run_id       text        NOT NULL,
    target_step  text        NOT NULL,
    source_step  text        NOT NULL,
    spread_index integer     NOT NULL DEFAULT -1,
    org_id       text        NOT NULL DEFAULT 'default',
    value        jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT inbox_pkey PRIMARY KEY (run_id, target_step, source_step, spread_index, org_id)
);

COMMENT ON TABLE charter.inbox IS
    'Inputs waiting for a node: a dependency''s output (spread_index -1) or one map element''s result (its index).';
