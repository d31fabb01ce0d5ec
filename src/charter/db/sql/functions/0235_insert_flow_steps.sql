-- Writes the steps and dependencies of a (validated) flow shape for a version: the one place
-- a shape becomes rows, for flows and for registry versions whose DSL is a flow shape.
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
$$;
