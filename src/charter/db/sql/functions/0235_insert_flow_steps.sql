-- Writes the steps and dependencies of a (validated) flow shape for a version: the one place
-- a shape becomes rows, for flows and for registry versions whose DSL is a flow shape. With
-- them, the facts its runs ask of them on every start and completion (flow_version_facts).
CREATE OR REPLACE FUNCTION charter._insert_flow_steps(p_version_id text, p_shape jsonb)
RETURNS void
LANGUAGE sql
SET search_path = ''
AS $$
    INSERT INTO charter.flow_steps (
        version_id, slug, step_index, step_type,
        opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay, config, opt_limits)
    SELECT p_version_id, s.value->>'slug', (s.ordinality - 1)::integer, s.value->>'stepType',
           (s.value #>> '{options,maxAttempts}')::numeric::integer,
           (s.value #>> '{options,baseDelay}')::numeric::integer,
           (s.value #>> '{options,timeout}')::numeric::integer,
           (s.value #>> '{options,startDelay}')::numeric::integer,
           s.value->'config', charter._option_limits(s.value->'options')
      FROM jsonb_array_elements(p_shape->'steps') WITH ORDINALITY AS s;

    INSERT INTO charter.flow_step_deps (version_id, step_slug, dep_slug)
    SELECT p_version_id, s.value->>'slug', d.dep
      FROM jsonb_array_elements(p_shape->'steps') AS s
     CROSS JOIN LATERAL jsonb_array_elements_text(s.value->'dependencies') AS d(dep);

    -- A chain of plain steps (each with at most one dependency and one dependent, one root)
    -- keeps no readiness rows; the roots in slug order, the order start_run queues them.
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
      LEFT JOIN (SELECT x.step_slug, count(*) AS deps FROM charter.flow_step_deps AS x
                  WHERE x.version_id = p_version_id GROUP BY x.step_slug) AS d ON d.step_slug = s.slug
      LEFT JOIN (SELECT x.dep_slug, count(*) AS dependents FROM charter.flow_step_deps AS x
                  WHERE x.version_id = p_version_id GROUP BY x.dep_slug) AS o ON o.dep_slug = s.slug
     WHERE s.version_id = p_version_id
     GROUP BY s.version_id;
$$;
