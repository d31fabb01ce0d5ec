-- A run's readiness rows: its step_states, or for a run that keeps none (see
-- _keeps_readiness) the rows it would have. A 1-step run's, and a completed chain's, are read
-- off its status (retention may have dropped a finished run's evidence, never its status);
-- a running, failed or cancelled chain's are the projection derived from its evidence
-- (compute_run_projection, equal to the rows by WF-15), a ready step of a cancelled run
-- being cancelled. Completion times come from the evidence. What readers of a run's steps
-- use (get_run, run_projection, retry_run, the run graph), so that the kinds of run look
-- alike. A run its runner reports (seed 001's invocation) has none.
CREATE OR REPLACE FUNCTION charter._step_states_of(p_run charter.runs)
RETURNS SETOF charter.step_states
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_run.reported OR charter._keeps_readiness(p_run.version_id) THEN
        RETURN QUERY SELECT s.* FROM charter.step_states AS s
                      WHERE s.run_id = p_run.id AND s.org_id = p_run.org_id;
    ELSIF p_run.status = 'completed'
          OR (SELECT f.step_count FROM charter.flow_version_facts AS f WHERE f.version_id = p_run.version_id) = 1 THEN
        RETURN QUERY
        SELECT p_run.id, x.slug, p_run.org_id, x.status, x.required, x.arrivals, x.initial_tasks,
               x.remaining_tasks, NULL::timestamptz,
               CASE WHEN x.status <> 'completed' THEN NULL
                    WHEN x.slug = '$end' THEN p_run.finished_at
                    ELSE coalesce((SELECT min(e.finished_at) FROM charter.step_executions AS e
                                    WHERE e.run_id = p_run.id AND e.org_id = p_run.org_id
                                      AND e.step_slug = x.slug AND e.status = 'completed'),
                                  p_run.finished_at) END,
               NULL::text, 0, NULL::text
          FROM (SELECT f.slug,
                       CASE p_run.status WHEN 'running' THEN 'ready' WHEN 'completed' THEN 'completed'
                                         WHEN 'failed' THEN 'failed' ELSE 'cancelled' END AS status,
                       (SELECT count(*) FROM charter.flow_step_deps AS d
                         WHERE d.version_id = f.version_id AND d.step_slug = f.slug)::integer AS required,
                       (SELECT count(*) FROM charter.flow_step_deps AS d
                         WHERE d.version_id = f.version_id AND d.step_slug = f.slug
                           AND p_run.status = 'completed')::integer AS arrivals,
                       1 AS initial_tasks,
                       CASE WHEN p_run.status = 'completed' THEN 0 ELSE 1 END AS remaining_tasks
                  FROM charter.flow_steps AS f WHERE f.version_id = p_run.version_id
                UNION ALL
                SELECT '$end', CASE WHEN p_run.status = 'completed' THEN 'completed' ELSE 'waiting' END,
                       1, CASE WHEN p_run.status = 'completed' THEN 1 ELSE 0 END, NULL, NULL) AS x;
    ELSE
        RETURN QUERY
        SELECT p_run.id, x.key, p_run.org_id,
               CASE WHEN p_run.status = 'cancelled' AND x.value->>'status' = 'ready' THEN 'cancelled'
                    ELSE x.value->>'status' END,
               (x.value->>'required')::integer, (x.value->>'arrivals')::integer,
               (x.value->>'initialTasks')::integer, (x.value->>'remainingTasks')::integer,
               NULL::timestamptz,
               CASE WHEN x.value->>'status' = 'completed' AND x.key <> '$end' THEN (
                   SELECT min(e.finished_at) FROM charter.step_executions AS e
                    WHERE e.run_id = p_run.id AND e.org_id = p_run.org_id
                      AND e.step_slug = x.key AND e.status = 'completed') END,
               NULL::text, 0, NULL::text
          FROM jsonb_each(charter.compute_run_projection(p_run.id, p_run.org_id)->'steps') AS x;
    END IF;
END;
$$;
