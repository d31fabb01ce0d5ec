-- The definition registry (seed 001): versions carry their DSL, commit message, operation
-- and lineage; runs carry the invocation's evolution context, owner and cost.

ALTER TABLE charter.workflow_versions
    ADD COLUMN dsl            jsonb,
    ADD COLUMN commit_message text,
    ADD COLUMN operation      text,
    ADD COLUMN generation_id  text,
    ADD COLUMN owner_id       text,
    ADD CONSTRAINT operation_is_known
        CHECK (operation IN ('init', 'crossover', 'mutation', 'immigrant'));

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

ALTER TABLE charter.runs
    ADD COLUMN owner_id         text,
    ADD COLUMN generation_id    text,
    ADD COLUMN evolution_run_id text,
    ADD COLUMN usd_cost         numeric(16, 6) NOT NULL DEFAULT 0,
    ADD CONSTRAINT usd_cost_is_not_negative CHECK (usd_cost >= 0);

-- Functions whose arguments changed in this version: drop the old signatures so that the
-- new files do not add overloads beside them.
DROP FUNCTION IF EXISTS charter.start_run(text, jsonb, text, text);
DROP FUNCTION IF EXISTS charter._complete_one(bigint, uuid, jsonb, text);
DROP FUNCTION IF EXISTS charter.complete_task(bigint, uuid, jsonb, text);
DROP FUNCTION IF EXISTS charter.complete_tasks(bigint[], uuid[], jsonb[], text);
DROP FUNCTION IF EXISTS charter._fail_one(bigint, uuid, jsonb, boolean, text);
DROP FUNCTION IF EXISTS charter.fail_task(bigint, uuid, jsonb, boolean, text);
DROP FUNCTION IF EXISTS charter.fail_tasks(bigint[], uuid[], jsonb[], boolean[], text);
