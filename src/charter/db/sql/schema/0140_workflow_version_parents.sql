CREATE TABLE charter.workflow_version_parents (
    version_id        text    NOT NULL,
    parent_version_id text    NOT NULL,
    position          integer NOT NULL,
    CONSTRAINT workflow_version_parents_pkey PRIMARY KEY (version_id, parent_version_id),
    CONSTRAINT workflow_version_parents_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id) ON DELETE CASCADE,
    CONSTRAINT workflow_version_parents_parent_fkey FOREIGN KEY (parent_version_id)
        REFERENCES charter.workflow_versions (id),
    CONSTRAINT version_is_not_its_own_parent CHECK (version_id <> parent_version_id)
);

COMMENT ON TABLE charter.workflow_version_parents IS
    'Lineage: the versions a version was made from (crossover has two or more), in order. Immutable.';

CREATE INDEX workflow_version_parents_parent_idx
    ON charter.workflow_version_parents (parent_version_id);
