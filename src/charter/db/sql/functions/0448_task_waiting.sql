-- What a queued task waits for, for people (get_run's waitingFor), or NULL when it is
-- simply next in line: its event, its wake-up time, its child run, a rate limit's token, a
-- concurrency slot, or the time it asked to be resumed at.
CREATE OR REPLACE FUNCTION charter._task_waiting(p_task charter.tasks, p_step_type text, p_config jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_wait    charter.flow_event_waits;
    v_running integer;
    v_child   text;
BEGIN
    IF p_step_type = 'wait_event' THEN
        SELECT * INTO v_wait FROM charter.flow_event_waits AS w
         WHERE w.run_id = p_task.run_id AND w.step_slug = p_task.step_slug AND w.task_index = p_task.task_index
           AND w.org_id = p_task.org_id;
        IF FOUND AND v_wait.event IS NULL THEN
            RETURN jsonb_build_object('kind', 'event', 'eventKey', v_wait.event_key, 'timeoutAt', v_wait.timeout_at);
        END IF;
    ELSIF p_step_type = 'sleep' AND p_task.available_at > now() THEN
        RETURN jsonb_build_object('kind', 'sleep', 'until', p_task.available_at);
    ELSIF p_config ? 'child' AND p_task.available_at = 'infinity' THEN
        SELECT r.id INTO v_child FROM charter.runs AS r
         WHERE r.parent_run_id = p_task.run_id AND r.parent_step = p_task.step_slug
           AND r.parent_task_index = p_task.task_index AND r.child_key = '$body'
           AND r.org_id = p_task.org_id;
        RETURN jsonb_build_object('kind', 'child', 'childRunId', v_child);
    END IF;
    IF p_task.rate_key IS NOT NULL AND p_task.available_at > now() THEN
        RETURN jsonb_build_object('kind', 'rateLimit', 'key', p_task.rate_key, 'until', p_task.available_at);
    END IF;
    IF p_task.limit_key IS NOT NULL THEN
        SELECT count(*) INTO v_running FROM charter.tasks AS t
         WHERE t.limit_key = p_task.limit_key AND t.org_id = p_task.org_id AND t.status = 'started'
           AND t.available_at > now();
        IF v_running >= p_task.limit_max THEN
            RETURN jsonb_build_object('kind', 'concurrency', 'key', p_task.limit_key,
                                      'running', v_running, 'limit', p_task.limit_max);
        END IF;
    END IF;
    IF p_task.available_at > now() THEN
        RETURN jsonb_build_object('kind', 'time', 'until', p_task.available_at);
    END IF;
    RETURN NULL;
END;
$$;
