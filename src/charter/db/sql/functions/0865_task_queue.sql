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

-- Whether a task may name this function: schema.function(jsonb) RETURNS jsonb, SECURITY
-- DEFINER, and charter_worker may execute it.
CREATE OR REPLACE FUNCTION charter._worker_may_run(p_function_name text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_proc regprocedure;
BEGIN
    IF coalesce(p_function_name, '') !~ '^[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*$' THEN
        RETURN false;
    END IF;
    v_proc := to_regprocedure(p_function_name || '(jsonb)');
    RETURN v_proc IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_proc AS p
                    WHERE p.oid = v_proc AND p.prosecdef AND p.prorettype = 'jsonb'::regtype)
       AND has_function_privilege('charter_worker', v_proc, 'EXECUTE');
END;
$$;

-- Appends an operational error (seed 003 queues.error) for a task the worker holds.
-- p_org_id is the task's org, as the claim gave it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.record_task_error(
    p_task_id bigint, p_worker_id text, p_stage text, p_error text, p_context jsonb DEFAULT '{}',
    p_org_id text DEFAULT NULL)
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    INSERT INTO charter.task_errors (org_id, task_id, task_type, worker_id, stage, error, context)
    SELECT x.org_id, x.id, x.effect_type, p_worker_id, p_stage, left(p_error, 4000), coalesce(p_context, '{}')
      FROM charter.side_effects AS x
     WHERE x.id = p_task_id AND x.org_id = charter._effect_org(p_task_id, p_org_id)
       AND x.worker_id = p_worker_id
     LIMIT 1
$$;

-- The function runner (seed 003): SECURITY INVOKER, so the caller's own EXECUTE grant on
-- the target decides. The target takes the whole payload (jsonb) and returns the result
-- envelope {"success", "error", "validation_failure_message", "payload"}. An exception in
-- the target rolls back its work and comes back as {"success": false, "error": ...}. With
-- p_org_id the call is scoped to the task's org (charter.org_id), which handlers check, so
-- a payload can never reach another org's rows.
CREATE OR REPLACE FUNCTION charter.run_function(p_function_name text, p_payload jsonb, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY INVOKER
SET search_path = ''
AS $$
DECLARE
    v_proc   regprocedure;
    v_schema text;
    v_name   text;
    v_result jsonb;
    v_state  text;
BEGIN
    BEGIN
        v_proc := to_regprocedure(p_function_name || '(jsonb)');
    EXCEPTION WHEN OTHERS THEN
        v_proc := NULL;
    END;
    IF v_proc IS NULL OR p_function_name !~ '^[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*$' THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('no function %s(jsonb): name it schema.function, taking the payload as jsonb', p_function_name));
    END IF;
    SELECT n.nspname, p.proname INTO v_schema, v_name
      FROM pg_catalog.pg_proc AS p JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
     WHERE p.oid = v_proc AND p.prorettype = 'jsonb'::regtype;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('%s must return jsonb (the result envelope)', v_proc));
    END IF;
    IF NOT has_function_privilege(v_proc, 'EXECUTE') THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('role %s may not execute %s: GRANT EXECUTE ON FUNCTION %s TO charter_worker', current_user,
                   v_proc, v_proc));
    END IF;
    IF p_org_id IS NOT NULL THEN
        PERFORM set_config('charter.org_id', p_org_id, true);
    END IF;
    BEGIN
        EXECUTE format('SELECT %I.%I($1)', v_schema, v_name) INTO v_result USING p_payload;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE;
        RETURN jsonb_build_object('success', false, 'error', format('%s: %s', v_proc, SQLERRM), 'sqlstate', v_state);
    END;
    IF jsonb_typeof(v_result) IS DISTINCT FROM 'object' OR jsonb_typeof(v_result->'success') IS DISTINCT FROM 'boolean' THEN
        RETURN jsonb_build_object('success', false, 'error',
            format('%s returned %s, not the result envelope {"success": true|false, ...}', v_proc, coalesce(v_result::text, 'NULL')));
    END IF;
    RETURN v_result;
END;
$$;
