-- The steps a run of the version starts with, and how their tasks are queued.
CREATE OR REPLACE FUNCTION charter._first_steps(p_version_id text)
RETURNS TABLE (slug text, max_attempts integer, start_delay integer, priority smallint)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT s.slug, o.max_attempts, o.start_delay, o.priority
      FROM charter.flow_steps AS s JOIN charter.workflow_versions AS v ON v.id = s.version_id
     CROSS JOIN LATERAL charter._step_options(s.opt_max_attempts, s.opt_base_delay, s.opt_timeout,
                                          s.opt_start_delay, s.opt_limits, v.opt_max_attempts,
                                          v.opt_base_delay, v.opt_timeout, v.opt_start_delay,
                                          v.opt_limits) AS o
     WHERE s.version_id = p_version_id
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                        WHERE d.version_id = s.version_id AND d.step_slug = s.slug)
$$;
