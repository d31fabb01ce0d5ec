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
