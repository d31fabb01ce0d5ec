-- The supervisor: payload {"send_email_task_id": X}.
CREATE OR REPLACE FUNCTION charter.send_email_supervisor(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_task      charter.send_email_tasks;
    v_succeeded boolean;
    v_failures  integer;
    v_scheduled integer;
    v_attempt   integer;
    v_task_id   bigint;
BEGIN
    SELECT * INTO v_task FROM charter.send_email_tasks AS t
     WHERE t.id = (p_payload->>'send_email_task_id')::bigint
       AND t.org_id = current_setting('charter.org_id', true)
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('no send_email_task %s', coalesce(p_payload->>'send_email_task_id', '(missing)')));
    END IF;
    -- Input.
    v_succeeded := charter.has_send_email_task_succeeded(v_task.id, v_task.org_id);
    v_failures := charter.count_send_email_task_failures(v_task.id, v_task.org_id);
    v_scheduled := charter.count_send_email_task_scheduled(v_task.id, v_task.org_id);
    -- Terminal: a success fact, out of attempts, or out of time.
    IF v_succeeded THEN
        RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object('state', 'succeeded'));
    END IF;
    IF v_failures >= v_task.max_attempts THEN
        RETURN jsonb_build_object('success', true, 'payload',
                                  jsonb_build_object('state', 'failed', 'attempts', v_failures));
    END IF;
    IF now() >= v_task.give_up_at THEN
        RETURN jsonb_build_object('success', true, 'payload',
                                  jsonb_build_object('state', 'gave_up', 'attempts', v_scheduled));
    END IF;
    -- Compute + output: one attempt outstanding at a time.
    IF v_scheduled <= v_failures THEN
        v_attempt := v_scheduled + 1;
        v_task_id := charter.enqueue_task(v_task.org_id, 'email', jsonb_build_object(
            'send_email_task_id', v_task.id, 'attempt', v_attempt,
            'before_handler', 'charter.get_email_payload',
            'success_handler', 'charter.record_email_success',
            'error_handler', 'charter.record_email_failure'));
        INSERT INTO charter.send_email_task_scheduled (org_id, send_email_task_id, attempt, task_id)
        VALUES (v_task.org_id, v_task.id, v_attempt, v_task_id);
    END IF;
    -- Again shortly, until terminal.
    PERFORM charter.enqueue_task(v_task.org_id, 'db_function',
        jsonb_build_object('db_function', 'charter.send_email_supervisor', 'send_email_task_id', v_task.id),
        now() + v_task.recheck_after);
    RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object(
        'state', 'sending', 'scheduled', greatest(v_scheduled, coalesce(v_attempt, 0)), 'failures', v_failures));
END;
$$;
