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
