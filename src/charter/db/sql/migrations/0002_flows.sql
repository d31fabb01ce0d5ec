-- Workflows, their immutable versions, and the steps of flow versions.

CREATE TABLE charter.workflows (
    slug               text        NOT NULL,
    org_id             text        NOT NULL DEFAULT 'default',
    description        text,
    owner_id           text,
    current_version_id text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT workflows_pkey PRIMARY KEY (slug),
    CONSTRAINT slug_is_not_empty CHECK (length(slug) BETWEEN 1 AND 200)
);

COMMENT ON TABLE charter.workflows IS
    'A workflow (a flow, or a document workflow); current_version_id is the version new runs start on.';

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
    CONSTRAINT opt_start_delay_in_range CHECK (opt_start_delay BETWEEN 0 AND 31536000)
);

COMMENT ON TABLE charter.workflow_versions IS
    'Immutable published versions (WF-04): a trigger rejects updates; only delete_flow_and_data removes them.';

ALTER TABLE charter.workflows
    ADD CONSTRAINT workflows_current_version_fkey FOREIGN KEY (current_version_id)
        REFERENCES charter.workflow_versions (id);

CREATE TABLE charter.flow_steps (
    version_id       text    NOT NULL,
    slug             text    NOT NULL,
    step_index       integer NOT NULL,
    step_type        text    NOT NULL,
    opt_max_attempts integer,
    opt_base_delay   integer,
    opt_timeout      integer,
    opt_start_delay  integer,
    CONSTRAINT flow_steps_pkey PRIMARY KEY (version_id, slug),
    CONSTRAINT flow_steps_index_unique UNIQUE (version_id, step_index),
    CONSTRAINT flow_steps_version_fkey FOREIGN KEY (version_id)
        REFERENCES charter.workflow_versions (id) ON DELETE CASCADE,
    CONSTRAINT step_type_is_known CHECK (step_type IN ('single', 'map')),
    CONSTRAINT opt_max_attempts_in_range CHECK (opt_max_attempts BETWEEN 1 AND 1000),
    CONSTRAINT opt_base_delay_in_range CHECK (opt_base_delay BETWEEN 0 AND 86400),
    CONSTRAINT opt_timeout_in_range CHECK (opt_timeout BETWEEN 1 AND 86400),
    CONSTRAINT opt_start_delay_in_range CHECK (opt_start_delay BETWEEN 0 AND 31536000)
);

COMMENT ON TABLE charter.flow_steps IS
    'The steps of a flow version in topological order; opt_* may be tuned, nothing else changes.';

CREATE TABLE charter.flow_step_deps (
    version_id text NOT NULL,
    step_slug  text NOT NULL,
    dep_slug   text NOT NULL,
    CONSTRAINT flow_step_deps_pkey PRIMARY KEY (version_id, step_slug, dep_slug),
    CONSTRAINT flow_step_deps_step_fkey FOREIGN KEY (version_id, step_slug)
        REFERENCES charter.flow_steps (version_id, slug) ON DELETE CASCADE,
    CONSTRAINT flow_step_deps_dep_fkey FOREIGN KEY (version_id, dep_slug)
        REFERENCES charter.flow_steps (version_id, slug) ON DELETE CASCADE,
    CONSTRAINT step_does_not_depend_on_itself CHECK (step_slug <> dep_slug)
);

-- Successor lookups (which steps wait for this one) when a step completes.
CREATE INDEX flow_step_deps_dep_idx ON charter.flow_step_deps (version_id, dep_slug);
