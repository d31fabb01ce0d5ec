CREATE TABLE charter.flow_version_facts (
    version_id      text    NOT NULL,
    keeps_readiness boolean NOT NULL,
    root_steps      text[]  NOT NULL,
    map_roots       text[]  NOT NULL,
    step_count      integer NOT NULL,
    CONSTRAINT flow_version_facts_pkey PRIMARY KEY (version_id),
    CONSTRAINT flow_version_facts_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id) ON DELETE CASCADE
);

COMMENT ON TABLE charter.flow_version_facts IS
    'Facts of a flow version''s steps that its runs read on every start and completion: derived once from flow_steps and flow_step_deps.';
