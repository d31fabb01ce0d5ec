-- What a claimed task of a waiting step waited for, for the worker:
--   sleep       {"output": {"wokeAt", "dueAt"}}
--   wait_event  {"output": the event's payload} or, after its timeout,
--               {"output": {"timedOut": true, "eventKey", "timeoutAt"}}
--   child step  {"child": {"runId", "status", "output", "error"}} once its child run has
--               finished; NULL before (the handler runs and gives the child's input).
CREATE OR REPLACE FUNCTION charter._step_resume(
    p_run_id text, p_org_id text, p_step_slug text, p_task_index integer, p_type text, p_config jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_wait  charter.flow_event_waits;
    v_child charter.runs;
BEGIN
    IF p_type = 'sleep' THEN
        RETURN jsonb_build_object('output', jsonb_build_object(
            'wokeAt', now(),
            'dueAt', (SELECT s.ready_at FROM charter.step_states AS s
                       WHERE s.run_id = p_run_id AND s.step_slug = p_step_slug
                         AND s.org_id = p_org_id)));
    ELSIF p_type = 'wait_event' THEN
        SELECT * INTO v_wait FROM charter.flow_event_waits AS w
         WHERE w.run_id = p_run_id AND w.step_slug = p_step_slug AND w.task_index = p_task_index
           AND w.org_id = p_org_id;
        IF v_wait.event IS NOT NULL THEN
            RETURN jsonb_build_object('output', v_wait.event->'payload', 'event', v_wait.event);
        END IF;
        RETURN jsonb_build_object('output', jsonb_build_object(
            'timedOut', true, 'eventKey', v_wait.event_key, 'timeoutAt', v_wait.timeout_at));
    ELSIF p_config ? 'child' THEN
        SELECT * INTO v_child FROM charter.runs AS r
         WHERE r.parent_run_id = p_run_id AND r.parent_step = p_step_slug
           AND r.parent_task_index = p_task_index AND r.child_key = '$body'
           AND r.org_id = p_org_id;
        IF FOUND AND v_child.status <> 'running' THEN
            RETURN jsonb_build_object('child', jsonb_build_object(
                'runId', v_child.id, 'status', v_child.status, 'output', v_child.output,
                'error', v_child.error));
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
