-- A run with its steps, for clients and `charter status`: status, output, error, cost, how
-- many live workers run its version's code, and per step its state, task counts, attempts,
-- first start, completion, output (once completed), last error (unless completed) and what
-- a queued step waits for (an event, a time, a child run, a rate limit, a concurrency slot);
-- its priority, its parent (a child run) and its children.
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned again on every call (before
-- PostgreSQL 18), and planning this query cost several times running it; every client.wait
-- reads its runs through here, so its plans are generic ones, made once per session.
-- p_org_id is the run's org (looked up by id when null): a client names its own, and
-- another org's run is not found.
CREATE OR REPLACE FUNCTION charter.get_run(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    r       charter.runs;
    v_steps jsonb;
    v_org      text := charter._run_org(p_run_id, p_org_id);  -- looked up before the query, not nested in it (Citus)
BEGIN
    SELECT * INTO r FROM charter.runs AS x
     WHERE x.id = p_run_id AND x.org_id = v_org;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- One statement per kind of run: PostgreSQL starts every node of a statement's plan
    -- whether it runs or not, and starting them cost more than running them.
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i WHERE i.id = r.id AND i.org_id = r.org_id) THEN
        -- A document's instance: every node execution with its evidence, in order.
        SELECT jsonb_agg(jsonb_build_object(
                   'slug', e.step_slug, 'stepType', e.node_type, 'status', e.status, 'tasks', NULL,
                   'remainingTasks', NULL, 'attempts', 1, 'startedAt', e.started_at,
                   'completedAt', CASE WHEN e.status <> 'running' THEN e.finished_at END,
                   'output', e.output, 'error', e.error, 'token', e.token,
                   'entityVersion', e.entity_version, 'actor', e.actor,
                   'chosenEdgeIds', e.output->'chosenEdgeIds')
               ORDER BY e.finished_at, e.id)
          INTO v_steps
          FROM charter.step_executions AS e WHERE e.run_id = r.id AND e.org_id = r.org_id;
    ELSIF r.status = 'completed' AND NOT r.reported AND NOT charter._keeps_readiness(r.version_id) THEN
        -- A completed chain (what most waits return): every step completed, as the branch
        -- below would say, from one read of each step's evidence instead of two.
        SELECT jsonb_agg(jsonb_build_object(
                   'slug', fs.slug, 'stepType', fs.step_type, 'status', 'completed',
                   'tasks', 1, 'remainingTasks', 0,
                   'attempts', coalesce((SELECT sum(t.attempts) FROM charter.tasks AS t
                                          WHERE t.run_id = r.id AND t.step_slug = fs.slug
                                            AND t.org_id = r.org_id), 0)
                               + coalesce(e.completed_attempts, 0),
                   'startedAt', e.started_at, 'completedAt', coalesce(e.completed_at, r.finished_at),
                   'output', coalesce(
                                 (SELECT i.value FROM charter.inbox AS i
                                   WHERE i.run_id = r.id AND i.source_step = fs.slug
                                     AND i.org_id = r.org_id AND i.spread_index = -1 LIMIT 1),
                                 r.output -> fs.slug),
                   'error', NULL, 'waitingFor', NULL)
               ORDER BY fs.step_index)
          INTO v_steps
          FROM charter.flow_steps AS fs
          LEFT JOIN LATERAL (
              SELECT min(x.started_at) AS started_at,
                     sum(x.attempt) FILTER (WHERE x.status = 'completed') AS completed_attempts,
                     min(x.finished_at) FILTER (WHERE x.status = 'completed') AS completed_at
                FROM charter.step_executions AS x
               WHERE x.run_id = r.id AND x.step_slug = fs.slug AND x.org_id = r.org_id) AS e ON true
         WHERE fs.version_id = r.version_id;
    ELSE
        SELECT jsonb_agg(jsonb_build_object(
                   'slug', fs.slug, 'stepType', fs.step_type, 'status', s.status,
                   'tasks', s.initial_tasks, 'remainingTasks', s.remaining_tasks,
                   -- Attempts of tasks still queued, and of completed ones (which left the
                   -- queue) as their evidence says.
                   'attempts', coalesce((SELECT sum(t.attempts) FROM charter.tasks AS t
                                          WHERE t.run_id = r.id AND t.step_slug = fs.slug
                                            AND t.org_id = r.org_id), 0)
                               + coalesce(e.completed_attempts, 0),
                   'startedAt', e.started_at, 'completedAt', s.completed_at,
                   -- A run's only last step: its output is the run's (no inbox row).
                   'output', CASE WHEN s.status = 'completed' THEN coalesce(
                                 (SELECT i.value FROM charter.inbox AS i
                                   WHERE i.run_id = r.id AND i.source_step = fs.slug
                                     AND i.org_id = r.org_id AND i.spread_index = -1 LIMIT 1),
                                 r.output -> fs.slug) END,
                   'error', CASE WHEN s.status <> 'completed' THEN e.error END,
                   'waitingFor', CASE WHEN s.status = 'ready' AND r.status = 'running' THEN (
                       SELECT charter._task_waiting(ROW(t.*)::charter.tasks, fs.step_type, fs.config) FROM charter.tasks AS t
                        WHERE t.run_id = r.id AND t.step_slug = fs.slug AND t.org_id = r.org_id
                          AND t.status = 'queued'
                        ORDER BY t.task_index LIMIT 1) END)
               ORDER BY fs.step_index)
          INTO v_steps
          FROM charter.flow_steps AS fs
          JOIN charter._step_states_of(r) AS s ON s.step_slug = fs.slug
          -- The step's evidence in one read: its first start, the attempts of its completed
          -- tasks, and its last error.
          LEFT JOIN LATERAL (
              SELECT min(x.started_at) AS started_at,
                     sum(x.attempt) FILTER (WHERE x.status = 'completed') AS completed_attempts,
                     (array_agg(x.error ORDER BY x.id DESC) FILTER (WHERE x.status = 'failed'))[1] AS error
                FROM charter.step_executions AS x
               WHERE x.run_id = r.id AND x.step_slug = fs.slug AND x.org_id = r.org_id) AS e ON true
         WHERE fs.version_id = r.version_id;
    END IF;
    RETURN jsonb_build_object(
        'id', r.id, 'flow', r.workflow_slug, 'versionId', r.version_id,
        'version', (SELECT v.version FROM charter.workflow_versions AS v WHERE v.id = r.version_id),
        'status', r.status, 'input', r.input, 'output', r.output, 'error', r.error,
        'usdCost', r.usd_cost, 'createdAt', r.created_at, 'finishedAt', r.finished_at,
        'priority', r.priority,
        'parent', CASE WHEN r.parent_run_id IS NOT NULL THEN jsonb_build_object(
                      'runId', r.parent_run_id, 'step', r.parent_step,
                      'taskIndex', r.parent_task_index, 'key', r.child_key) END,
        'children', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                       'runId', c.id, 'flow', c.workflow_slug, 'status', c.status, 'step', c.parent_step,
                       'taskIndex', c.parent_task_index, 'key', c.child_key,
                       'createdAt', c.created_at, 'finishedAt', c.finished_at)
                   ORDER BY c.created_at, c.id)
              FROM charter.runs AS c WHERE c.parent_run_id = r.id AND c.org_id = r.org_id), '[]'::jsonb),
        'servingWorkers', (SELECT count(*) FROM charter.workers AS w
                            WHERE r.version_id = ANY (w.versions) AND w.stopped_at IS NULL
                              AND w.last_heartbeat_at > now() - make_interval(secs => w.lease_seconds)),
        'steps', coalesce(v_steps, '[]'::jsonb));
END;
$$;
