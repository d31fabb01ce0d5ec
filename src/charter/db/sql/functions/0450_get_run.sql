-- A run with its steps, for clients and `charter status`: status, output, error, and per
-- step its state, task counts, attempts, first start, completion and last error.
CREATE OR REPLACE FUNCTION charter.get_run(p_run_id text)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', r.id, 'flow', r.workflow_slug, 'versionId', r.version_id, 'version', v.version,
        'status', r.status, 'input', r.input, 'output', r.output, 'error', r.error,
        'createdAt', r.created_at, 'finishedAt', r.finished_at,
        'steps', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                       'slug', fs.slug, 'stepType', fs.step_type, 'status', s.status,
                       'tasks', s.initial_tasks, 'remainingTasks', s.remaining_tasks,
                       'attempts', coalesce((SELECT sum(t.attempts) FROM charter.tasks AS t
                                              WHERE t.run_id = r.id AND t.step_slug = fs.slug), 0),
                       'startedAt', e.started_at, 'completedAt', s.completed_at,
                       'error', e.error)
                   ORDER BY fs.step_index)
              FROM charter.flow_steps AS fs
              JOIN charter.step_states AS s ON s.run_id = r.id AND s.step_slug = fs.slug
              LEFT JOIN LATERAL (
                  SELECT min(x.started_at) AS started_at,
                         (SELECT y.error FROM charter.step_executions AS y
                           WHERE y.run_id = r.id AND y.step_slug = fs.slug AND y.status = 'failed'
                           ORDER BY y.id DESC LIMIT 1) AS error
                    FROM charter.step_executions AS x
                   WHERE x.run_id = r.id AND x.step_slug = fs.slug) AS e ON true
             WHERE fs.version_id = r.version_id), '[]'::jsonb))
      FROM charter.runs AS r
      JOIN charter.workflow_versions AS v ON v.id = r.version_id
     WHERE r.id = p_run_id
$$;
