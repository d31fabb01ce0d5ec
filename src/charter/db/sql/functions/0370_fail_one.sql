-- Records a failed attempt. With attempts left (and not p_permanent) the task is queued
-- again after base_delay * 2^(attempt-1) seconds, ±25% jitter: 'retrying'. Otherwise the
-- step and the run fail with the error and the run's other tasks are cancelled: 'failed'.
-- A fenced-out call changes nothing: 'stale'. The task is named by its whole key, (id, org_id).
CREATE OR REPLACE FUNCTION charter._fail_one(
    p_task_id bigint,
    p_org_id text,
    p_token uuid,
    p_error jsonb,
    p_permanent boolean,
    p_worker_id text,
    p_cost numeric DEFAULT 0
)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_run_id text;
    v_task   charter.tasks;
    v_final  boolean;
    v_error  jsonb;
    v_delay  numeric;
BEGIN
    v_run_id := charter._lock_task_run(p_task_id, p_org_id);
    IF v_run_id IS NULL THEN
        RETURN 'stale';
    END IF;
    SELECT * INTO v_task FROM charter.tasks AS t
     WHERE t.id = p_task_id AND t.org_id = p_org_id AND t.delivery_token = p_token AND t.status = 'started'
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF coalesce(p_cost, 0) > 0 THEN  -- a failed attempt may still have cost money
        UPDATE charter.runs SET usd_cost = usd_cost + p_cost WHERE id = v_run_id AND org_id = p_org_id;
    END IF;
    v_final := p_permanent OR v_task.attempts >= v_task.max_attempts;
    v_error := coalesce(p_error, '{}'::jsonb) || jsonb_build_object(
        'step', v_task.step_slug, 'taskIndex', v_task.task_index, 'attempt', v_task.attempts);
    INSERT INTO charter.step_executions (
        org_id, run_id, step_slug, task_index, attempt, status, terminal, worker_id,
        started_at, error)
    VALUES (v_task.org_id, v_run_id, v_task.step_slug, v_task.task_index, v_task.attempts,
            'failed', v_final, coalesce(p_worker_id, v_task.worker_id), v_task.started_at, v_error);
    IF NOT v_final THEN
        SELECT o.base_delay * power(2, v_task.attempts - 1) * (0.75 + random() * 0.5)
          INTO v_delay
          FROM charter.runs AS r
          JOIN charter.flow_steps AS s ON s.version_id = r.version_id AND s.slug = v_task.step_slug
          JOIN charter.workflow_versions AS v ON v.id = r.version_id
         CROSS JOIN LATERAL charter._step_options(s.opt_max_attempts, s.opt_base_delay, s.opt_timeout,
                                          s.opt_start_delay, s.opt_limits, v.opt_max_attempts,
                                          v.opt_base_delay, v.opt_timeout, v.opt_start_delay,
                                          v.opt_limits) AS o
         WHERE r.id = v_run_id AND r.org_id = p_org_id;
        UPDATE charter.tasks
           SET status = 'queued', delivery_token = NULL, worker_id = NULL,
               available_at = now() + make_interval(secs => v_delay::double precision)
         WHERE id = p_task_id AND org_id = p_org_id;
        PERFORM pg_notify('charter_tasks', v_task.workflow_slug);
        RETURN 'retrying';
    END IF;
    UPDATE charter.tasks SET status = 'failed', available_at = NULL
     WHERE id = p_task_id AND org_id = p_org_id;
    PERFORM charter._fail_run(v_run_id, p_org_id, v_task.step_slug, v_error);
    RETURN 'failed';
END;
$$;
