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
