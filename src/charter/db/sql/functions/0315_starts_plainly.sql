-- True when every first step of the version is a plain step: start_runs may start it
-- set-based. A map over the input, a sleep, a wait or a limit with a key needs start_run.
CREATE OR REPLACE FUNCTION charter._starts_plainly(p_version_id text)
RETURNS boolean
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT NOT EXISTS (
        SELECT 1 FROM charter.flow_steps AS s
         WHERE s.version_id = p_version_id
           AND (s.step_type <> 'single' OR s.config IS NOT NULL
                OR coalesce(s.opt_limits ?| '{concurrency,rateLimit}', false))
           AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                            WHERE d.version_id = s.version_id AND d.step_slug = s.slug))
       AND NOT coalesce((SELECT v.opt_limits ?| '{concurrency,rateLimit}'
                           FROM charter.workflow_versions AS v WHERE v.id = p_version_id), false)
$$;
