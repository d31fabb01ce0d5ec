-- Seed 003's queue in charter: tasks are rows of the side-effects outbox of kind 'task'
-- (claimed by claim_side_effects / dequeue_next_available_task). Supervisors and kickoffs
-- enqueue them; the worker never does.

-- Enqueues a task: db_function (payload names the function in "db_function"), email, sms or
-- webhook (payload names its handlers). Returns the task's id.
CREATE OR REPLACE FUNCTION charter.enqueue_task(
    p_org_id text, p_task_type text, p_payload jsonb, p_scheduled_at timestamptz DEFAULT now())
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
    v_id  bigint;
    v_bad text;
BEGIN
    IF p_task_type IS NULL OR p_task_type NOT IN ('db_function', 'email', 'sms', 'webhook') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('Unknown task type %L', p_task_type),
            HINT = 'A task is one of db_function, email, sms, webhook.';
    END IF;
    IF jsonb_typeof(p_payload) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = 'A task''s payload must be a JSON object',
            HINT = 'Pass the whole payload as an object, e.g. {"db_function": "app.my_supervisor", "id": 1}.';
    END IF;
    IF p_task_type = 'db_function' AND coalesce(p_payload->>'db_function', '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = 'A db_function task''s payload must name its function in "db_function"',
            HINT = 'E.g. {"db_function": "charter.send_email_supervisor", "send_email_task_id": 1}.';
    END IF;
    IF p_task_type <> 'db_function' AND coalesce(p_payload->>'before_handler', '') = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('A %s task''s payload must name its before_handler', p_task_type),
            HINT = 'The before handler returns what to send (seed 003: {"success": true, "payload": {...}}).';
    END IF;
    SELECT f.name INTO v_bad FROM (VALUES (p_payload->>'db_function'), (p_payload->>'before_handler'),
                                          (p_payload->>'success_handler'), (p_payload->>'error_handler')) AS f(name)
     WHERE f.name IS NOT NULL AND NOT charter._worker_may_run(f.name)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('%s is not a function charter_worker may run', v_bad),
            HINT = 'Name a schema.function(jsonb) RETURNS jsonb, SECURITY DEFINER, with GRANT EXECUTE ... TO charter_worker.';
    END IF;
    v_id := nextval('charter.side_effects_id_seq');
    INSERT INTO charter.side_effects (id, org_id, kind, effect_type, request, idempotency_key, max_attempts,
                                      next_retry_at)
    VALUES (v_id, v_org, 'task', p_task_type, p_payload || jsonb_build_object('task_type', p_task_type),
            'task:' || v_id, 3, coalesce(p_scheduled_at, now()));
    IF coalesce(p_scheduled_at, now()) <= now() THEN
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    RETURN v_id;
END;
$$;
