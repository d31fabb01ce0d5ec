-- Whether runs of the version keep readiness rows (step_states). A flow of one plain step
-- does not: its step is ready from the start and its run completes with it, so the rows
-- would say nothing the run's status does not, and writing them was a third of what such a
-- run cost (docs/architecture.md § 6). Every other version keeps them. (A SQL-standard
-- body without a SET clause: inlined where it is called.)
CREATE OR REPLACE FUNCTION charter._keeps_readiness(p_version_id text)
RETURNS boolean
LANGUAGE sql
STABLE
BEGIN ATOMIC
    SELECT count(*) <> 1 OR coalesce(bool_or(s.step_type <> 'single' OR s.config IS NOT NULL), false)
      FROM charter.flow_steps AS s
     WHERE s.version_id = p_version_id;
END;

-- A run's readiness rows: its step_states, or for a run that keeps none (see
-- _keeps_readiness) the rows it would have, read off its status. What readers of a run's
-- steps use (get_run, run_projection, retry_run, the run graph), so that the two kinds of
-- run look alike.
CREATE OR REPLACE FUNCTION charter._step_states_of(p_run charter.runs)
RETURNS SETOF charter.step_states
LANGUAGE sql
STABLE
BEGIN ATOMIC
    SELECT s.* FROM charter.step_states AS s
     WHERE s.run_id = p_run.id AND s.org_id = p_run.org_id
    UNION ALL
    SELECT p_run.id, x.slug, p_run.org_id, x.status, x.required, x.arrivals, x.initial_tasks,
           x.remaining_tasks, p_run.created_at,
           CASE WHEN p_run.status = 'completed' THEN p_run.finished_at END, NULL, 0, NULL
      FROM (SELECT f.slug,
                   CASE p_run.status WHEN 'running' THEN 'ready' WHEN 'completed' THEN 'completed'
                                     WHEN 'failed' THEN 'failed' ELSE 'cancelled' END AS status,
                   0 AS required, 0 AS arrivals, 1 AS initial_tasks,
                   CASE WHEN p_run.status = 'completed' THEN 0 ELSE 1 END AS remaining_tasks
              FROM charter.flow_steps AS f WHERE f.version_id = p_run.version_id
            UNION ALL
            SELECT '$end', CASE WHEN p_run.status = 'completed' THEN 'completed' ELSE 'waiting' END,
                   1, CASE WHEN p_run.status = 'completed' THEN 1 ELSE 0 END, NULL, NULL) AS x
     WHERE NOT charter._keeps_readiness(p_run.version_id);
END;

-- Whether charter executes the run (a flow's run), not a runner that reports it (seed 001's
-- invocations): it has readiness rows, a task or evidence.
CREATE OR REPLACE FUNCTION charter._executed_by_charter(p_run charter.runs)
RETURNS boolean
LANGUAGE sql
STABLE
BEGIN ATOMIC
    SELECT EXISTS (SELECT 1 FROM charter.step_states AS s
                    WHERE s.run_id = p_run.id AND s.org_id = p_run.org_id)
        OR EXISTS (SELECT 1 FROM charter.tasks AS t
                    WHERE t.run_id = p_run.id AND t.org_id = p_run.org_id)
        OR EXISTS (SELECT 1 FROM charter.step_executions AS e
                    WHERE e.run_id = p_run.id AND e.org_id = p_run.org_id);
END;
