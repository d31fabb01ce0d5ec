-- The steps a run of the version starts with, and how their tasks are queued.
CREATE OR REPLACE FUNCTION charter._first_steps(p_version_id text)
RETURNS TABLE (slug text, max_attempts integer, start_delay integer, priority smallint)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT s.slug,
           coalesce(s.opt_max_attempts, v.opt_max_attempts, (charter.flow_option_defaults()->>'maxAttempts')::integer),
           coalesce(s.opt_start_delay, v.opt_start_delay, (charter.flow_option_defaults()->>'startDelay')::integer),
           coalesce((s.opt_limits->>'priority')::smallint, (v.opt_limits->>'priority')::smallint, 0)
      FROM charter.flow_steps AS s JOIN charter.workflow_versions AS v ON v.id = s.version_id
     WHERE s.version_id = p_version_id
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                        WHERE d.version_id = s.version_id AND d.step_slug = s.slug)
$$;
