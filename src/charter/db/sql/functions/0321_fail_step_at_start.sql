-- A step that cannot start (a sleep's until or a wait's key renders to nothing usable): its
-- failure is recorded as evidence and fails the run, as a map over a non-array does.
CREATE OR REPLACE FUNCTION charter._fail_step_at_start(p_run charter.runs, p_step_slug text, p_type text, p_message text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_error jsonb := jsonb_build_object('type', p_type, 'message', p_message, 'step', p_step_slug,
                                        'taskIndex', 0, 'attempt', 0);
BEGIN
    INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal, error)
    VALUES (p_run.org_id, p_run.id, p_step_slug, 'failed', true, v_error);
    PERFORM charter._fail_run(p_run.id, p_run.org_id, p_step_slug, v_error);
END;
$$;
