CREATE TABLE charter.workflow_versions (
    id               text        NOT NULL,
    workflow_slug    text        NOT NULL,
    version          integer     NOT NULL,
    definition_kind  text        NOT NULL,
    shape            jsonb,
    compiled         jsonb,
    compiled_hash    text,
    compiler_version text,
    opt_max_attempts integer,
    opt_base_delay   integer,
    opt_timeout      integer,
    opt_start_delay  integer,
    created_at       timestamptz NOT NULL DEFAULT now(),
    dsl              jsonb,
    commit_message   text,
    operation        text,
    generation_id    text,
    owner_id         text,
    status           text        NOT NULL DEFAULT 'published',
    org_id           text        NOT NULL DEFAULT 'default',
    entity_type      text,
    contract         jsonb,
    base_ref         jsonb,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    opt_limits       jsonb,
    CONSTRAINT workflow_versions_pkey PRIMARY KEY (id),
    CONSTRAINT workflow_versions_number_unique UNIQUE (workflow_slug, version),
    CONSTRAINT workflow_versions_workflow_fkey FOREIGN KEY (workflow_slug)
        REFERENCES charter.workflows (slug) ON DELETE CASCADE,
    CONSTRAINT version_is_positive CHECK (version >= 1),
    CONSTRAINT definition_kind_is_known
        CHECK (definition_kind IN ('flow', 'envelope', 'org_patch', 'effective', 'external')),
    CONSTRAINT flow_has_shape CHECK (definition_kind <> 'flow' OR shape IS NOT NULL),
    CONSTRAINT compiled_hash_matches CHECK (compiled IS NULL OR compiled_hash = compiled->>'hash'),
    CONSTRAINT opt_max_attempts_in_range CHECK (opt_max_attempts BETWEEN 1 AND 1000),
    CONSTRAINT opt_base_delay_in_range CHECK (opt_base_delay BETWEEN 0 AND 86400),
    CONSTRAINT opt_timeout_in_range CHECK (opt_timeout BETWEEN 1 AND 86400),
    CONSTRAINT opt_start_delay_in_range CHECK (opt_start_delay BETWEEN 0 AND 31536000),
    CONSTRAINT operation_is_known
        CHECK (operation IN ('init', 'crossover', 'mutation', 'immigrant')),
    CONSTRAINT envelope_is_complete CHECK (
        definition_kind <> 'envelope'
        OR (dsl IS NOT NULL AND compiled IS NOT NULL AND compiled_hash IS NOT NULL)),
    CONSTRAINT definition_status_is_known CHECK (status IN ('draft', 'published', 'archived')),
    CONSTRAINT only_org_patches_are_drafts CHECK (status <> 'draft' OR definition_kind = 'org_patch'),
    CONSTRAINT org_patch_is_complete CHECK (
        definition_kind <> 'org_patch'
        OR (dsl IS NOT NULL AND base_ref IS NOT NULL AND entity_type IS NOT NULL AND compiled IS NULL)),
    CONSTRAINT effective_is_complete CHECK (
        definition_kind <> 'effective'
        OR (compiled IS NOT NULL AND compiled_hash IS NOT NULL AND entity_type IS NOT NULL))
);

CREATE INDEX workflow_versions_org_entity_idx
    ON charter.workflow_versions (org_id, entity_type, definition_kind, status)
    WHERE entity_type IS NOT NULL;

COMMENT ON TABLE charter.workflow_versions IS
    'Immutable published versions (WF-04): a trigger rejects updates; only delete_flow_and_data removes them.';

ALTER TABLE charter.workflows
    ADD CONSTRAINT workflows_current_version_fkey FOREIGN KEY (current_version_id)
        REFERENCES charter.workflow_versions (id);
