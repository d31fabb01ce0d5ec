CREATE TABLE charter.flow_steps (
    version_id       text    NOT NULL,
    slug             text    NOT NULL,
    step_index       integer NOT NULL,
    step_type        text    NOT NULL,
    opt_max_attempts integer,
    opt_base_delay   integer,
    opt_timeout      integer,
    opt_start_delay  integer,
    config           jsonb,
    opt_limits       jsonb,
    CONSTRAINT flow_steps_pkey PRIMARY KEY (version_id, slug),
    CONSTRAINT flow_steps_index_unique UNIQUE (version_id, step_index),
    CONSTRAINT flow_steps_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id) ON DELETE CASCADE,
    CONSTRAINT step_type_is_known CHECK (step_type IN ('single', 'map', 'sleep', 'wait_event')),
    CONSTRAINT opt_max_attempts_in_range CHECK (opt_max_attempts BETWEEN 1 AND 1000),
    CONSTRAINT opt_base_delay_in_range CHECK (opt_base_delay BETWEEN 0 AND 86400),
    CONSTRAINT opt_timeout_in_range CHECK (opt_timeout BETWEEN 1 AND 86400),
    CONSTRAINT opt_start_delay_in_range CHECK (opt_start_delay BETWEEN 0 AND 31536000)
);

COMMENT ON TABLE charter.flow_steps IS
    'The steps of a flow version in topological order; opt_* may be tuned, nothing else changes.';
