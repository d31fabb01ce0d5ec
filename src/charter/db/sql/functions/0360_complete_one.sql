-- Completes one claimed task: the single completion transaction of seed 004, for the
-- tasks record_outcomes does not record set-based (map and wait_event steps, directives).
-- Under the run's advisory lock (WF-01): fence on delivery_token + status (else 'stale'),
-- receipt first (WF-02, WF-14; a completion already recorded is 'stale'), evidence row
-- (WF-09), then the effects. The task row is deleted: the queue holds only work still to
-- do. A map task's result goes to its step's inbox at its index; the last one aggregates
-- them in index order. p_cost (what the attempt cost, e.g. a model call's price) is added
-- to the run's usd_cost. Returns 'completed' or 'stale'. The task is named by its whole key,
-- (id, org_id): a wrong org finds nothing, so the completion is 'stale'.
CREATE OR REPLACE FUNCTION charter._complete_one(
    p_task_id bigint,
    p_org_id text,
    p_token uuid,
    p_output jsonb,
    p_worker_id text,
    p_cost numeric DEFAULT 0,
    p_directive jsonb DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_run_id    text;
    v_task      charter.tasks;
    v_key       text;
    v_type      text;
    v_remaining integer;
BEGIN
    v_run_id := charter._lock_task_run(p_task_id, p_org_id);
    IF v_run_id IS NULL THEN
        RETURN 'stale';
    END IF;
    IF p_directive IS NOT NULL THEN
        RETURN charter._complete_directed(p_task_id, p_org_id, p_token, p_output, p_worker_id, p_cost,
                                          p_directive);
    END IF;
    -- A completed task leaves the queue: the receipt and the evidence row record it.
    DELETE FROM charter.tasks
     WHERE id = p_task_id AND org_id = p_org_id AND delivery_token = p_token AND status = 'started'
    RETURNING * INTO v_task;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    PERFORM charter._check_payload(p_output, format('The output of step %L', v_task.step_slug));
    v_key := charter._idempotency_key(v_run_id, p_org_id, v_task.step_slug, v_task.task_index);
    INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id)
    VALUES (v_run_id, v_key, v_task.org_id)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF coalesce(p_cost, 0) > 0 THEN
        UPDATE charter.runs SET usd_cost = usd_cost + p_cost WHERE id = v_run_id AND org_id = p_org_id;
    END IF;
    INSERT INTO charter.step_executions (
        org_id, run_id, step_slug, task_index, attempt, status, terminal, idempotency_key,
        worker_id, started_at, output)
    VALUES (v_task.org_id, v_run_id, v_task.step_slug, v_task.task_index, v_task.attempts,
            'completed', true, v_key,
            coalesce(p_worker_id, v_task.worker_id), v_task.started_at, p_output);

    SELECT s.step_type INTO v_type FROM charter.flow_steps AS s
     WHERE s.version_id = v_task.version_id AND s.slug = v_task.step_slug;
    IF v_type <> 'map' THEN
        IF v_type = 'wait_event' THEN
            DELETE FROM charter.flow_event_waits AS w
             WHERE w.run_id = v_run_id AND w.step_slug = v_task.step_slug AND w.task_index = v_task.task_index
               AND w.org_id = p_org_id;
        END IF;
        PERFORM charter._complete_step(v_run_id, p_org_id, v_task.step_slug, p_output);
        RETURN 'completed';
    END IF;
    INSERT INTO charter.inbox (run_id, target_step, source_step, spread_index, org_id, value)
    VALUES (v_run_id, v_task.step_slug, v_task.step_slug, v_task.task_index, v_task.org_id, p_output);
    UPDATE charter.step_states SET remaining_tasks = remaining_tasks - 1
     WHERE run_id = v_run_id AND step_slug = v_task.step_slug AND org_id = p_org_id
    RETURNING remaining_tasks INTO v_remaining;
    IF v_remaining = 0 THEN
        PERFORM charter._complete_step(v_run_id, p_org_id, v_task.step_slug, (
            SELECT jsonb_agg(i.value ORDER BY i.spread_index) FROM charter.inbox AS i
             WHERE i.run_id = v_run_id AND i.target_step = v_task.step_slug
               AND i.source_step = v_task.step_slug AND i.org_id = p_org_id));
    END IF;
    RETURN 'completed';
END;
$$;
