-- An attempt that finished with more to do than complete (record_outcomes' directive), under
-- the run's lock:
--   {"children": [{"flow", "input", "key"}]}  child runs ctx.start_child asked for, started
--       now, with the attempt's outcome, so an attempt that fails or is lost starts none;
--   {"resumeAt": ts}    the handler asked to be resumed later (Reschedule, ctx.sleep_until):
--       evidence 'rescheduled', the task queued again for then, the attempt not counted;
--   {"startChild": true}  a child step's handler gave its child's input: the child run starts
--       and the task is parked (evidence 'waiting') until the child finishes.
-- Otherwise the task completes as usual. A child that cannot start (its flow is not
-- deployed, its input is refused) fails the task for good with the reason.
CREATE OR REPLACE FUNCTION charter._complete_directed(
    p_task_id bigint, p_org_id text, p_token uuid, p_output jsonb, p_worker_id text, p_cost numeric,
    p_directive jsonb)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_task    charter.tasks;
    v_config  jsonb;
    v_child   jsonb;
    v_child_id text;
    v_state   text;
    v_message text;
BEGIN
    SELECT * INTO v_task FROM charter.tasks AS t
     WHERE t.id = p_task_id AND t.org_id = p_org_id AND t.delivery_token = p_token
       AND t.status = 'started'
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    SELECT s.config INTO v_config FROM charter.flow_steps AS s
     WHERE s.version_id = v_task.version_id AND s.slug = v_task.step_slug;
    BEGIN
        FOR v_child IN SELECT value FROM jsonb_array_elements(coalesce(p_directive->'children', '[]')) LOOP
            PERFORM charter._start_child(v_task, v_child->>'flow', v_child->'input', v_child->>'key');
        END LOOP;
        IF p_directive ? 'startChild' THEN
            IF NOT coalesce(v_config ? 'child', false) THEN
                RAISE EXCEPTION 'step % has no child flow', v_task.step_slug;
            END IF;
            UPDATE charter.tasks AS t
               SET status = 'queued', attempts = t.attempts - 1, delivery_token = NULL,
                   worker_id = NULL, available_at = 'infinity'
             WHERE t.id = p_task_id AND t.org_id = p_org_id;
            v_child_id := charter._start_child(v_task, v_config->>'child', p_output, '$body');
            -- A child from an earlier round of this step (the parent was retried): a failed
            -- one is retried with it; one that finished otherwise answers at once.
            CASE (SELECT r.status FROM charter.runs AS r WHERE r.id = v_child_id AND r.org_id = p_org_id)
            WHEN 'failed' THEN
                PERFORM charter.retry_run(v_child_id, p_org_id);
            WHEN 'running' THEN
                NULL;
            ELSE
                UPDATE charter.tasks AS t SET available_at = now()
                 WHERE t.id = p_task_id AND t.org_id = p_org_id;
            END CASE;
        END IF;
    EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
        RETURN charter._fail_one(p_task_id, p_org_id, p_token, jsonb_build_object(
            'type', 'ChildStartFailed', 'sqlstate', v_state,
            'message', format('A child run of step %L could not start: %s', v_task.step_slug, v_message)),
            true, p_worker_id, p_cost);
    END;
    IF coalesce(p_cost, 0) > 0 AND (p_directive ? 'startChild' OR p_directive ? 'resumeAt') THEN
        UPDATE charter.runs SET usd_cost = usd_cost + p_cost WHERE id = v_task.run_id AND org_id = p_org_id;
    END IF;
    IF p_directive ? 'startChild' THEN
        INSERT INTO charter.step_executions (
            org_id, run_id, step_slug, task_index, attempt, status, terminal, worker_id, started_at, output)
        VALUES (v_task.org_id, v_task.run_id, v_task.step_slug, v_task.task_index, v_task.attempts,
                'waiting', false, coalesce(p_worker_id, v_task.worker_id), v_task.started_at,
                jsonb_build_object('childRunId', v_child_id, 'input', p_output));
        RETURN 'waiting';
    END IF;
    IF p_directive ? 'resumeAt' THEN
        INSERT INTO charter.step_executions (
            org_id, run_id, step_slug, task_index, attempt, status, terminal, worker_id, started_at, output)
        VALUES (v_task.org_id, v_task.run_id, v_task.step_slug, v_task.task_index, v_task.attempts,
                'rescheduled', false, coalesce(p_worker_id, v_task.worker_id), v_task.started_at,
                jsonb_build_object('resumeAt', p_directive->'resumeAt'));
        UPDATE charter.tasks AS t
           SET status = 'queued', attempts = t.attempts - 1, delivery_token = NULL, worker_id = NULL,
               available_at = greatest(now(), (p_directive->>'resumeAt')::timestamptz)
         WHERE t.id = p_task_id AND t.org_id = p_org_id;
        PERFORM pg_notify('charter_tasks', v_task.workflow_slug);
        RETURN 'rescheduled';
    END IF;
    RETURN charter._complete_one(p_task_id, p_org_id, p_token, p_output, p_worker_id, p_cost);
END;
$$;
