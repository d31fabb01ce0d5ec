-- Each step of a version with the number of dependencies it waits for, and $end with the
-- number of steps nothing depends on: the readiness rows a new run starts with. (A
-- SQL-standard body without a SET clause: inlined into start_run's cached statement.)
CREATE OR REPLACE FUNCTION charter._step_requirements(p_version_id text)
RETURNS TABLE (slug text, required integer)
LANGUAGE sql
STABLE
BEGIN ATOMIC
    SELECT s.slug, (SELECT count(*) FROM charter.flow_step_deps AS d
                     WHERE d.version_id = s.version_id AND d.step_slug = s.slug)::integer
      FROM charter.flow_steps AS s WHERE s.version_id = p_version_id
    UNION ALL
    SELECT '$end', count(*)::integer
      FROM charter.flow_steps AS s
     WHERE s.version_id = p_version_id
       AND NOT EXISTS (SELECT 1 FROM charter.flow_step_deps AS d
                        WHERE d.version_id = s.version_id AND d.dep_slug = s.slug);
END;
