-- What every run of a flow version asks of its steps, worked out once when the steps are
-- written (charter._insert_flow_steps) instead of on every start, completion and read:
-- whether its runs keep readiness rows (see _keeps_readiness), the steps a run starts with,
-- which of those map over the run input, and how many steps it has. A version's steps and
-- dependencies never change (WF-04), so neither do these.
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

-- The versions there are now, as _insert_flow_steps gives a new one its row.
INSERT INTO charter.flow_version_facts (version_id, keeps_readiness, root_steps, map_roots, step_count)
SELECT s.version_id,
       NOT (bool_and(s.step_type = 'single' AND s.config IS NULL)
            AND coalesce(sum(d.deps), 0) = count(*) - 1
            AND coalesce(max(d.deps), 0) <= 1
            AND coalesce(max(o.dependents), 0) <= 1),
       coalesce(array_agg(s.slug ORDER BY s.slug) FILTER (WHERE d.deps IS NULL), '{}'),
       coalesce(array_agg(s.slug ORDER BY s.slug) FILTER (WHERE d.deps IS NULL AND s.step_type = 'map'), '{}'),
       count(*)::integer
  FROM charter.flow_steps AS s
  LEFT JOIN (SELECT x.version_id, x.step_slug, count(*) AS deps FROM charter.flow_step_deps AS x
              GROUP BY x.version_id, x.step_slug) AS d
         ON d.version_id = s.version_id AND d.step_slug = s.slug
  LEFT JOIN (SELECT x.version_id, x.dep_slug, count(*) AS dependents FROM charter.flow_step_deps AS x
              GROUP BY x.version_id, x.dep_slug) AS o
         ON o.version_id = s.version_id AND o.dep_slug = s.slug
 GROUP BY s.version_id;
