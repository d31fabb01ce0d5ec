-- A run whose $end heard from its last step: completed with p_output (its last steps'
-- outputs by name), announced, and its parent woken (a child run).
CREATE OR REPLACE FUNCTION charter._run_completed(p_run charter.runs, p_output jsonb)
RETURNS void
LANGUAGE plpgsql
AS $$  -- no SET clause (it costs every call): it runs with _complete_step's empty search path
BEGIN
    UPDATE charter.runs
       SET status = 'completed', finished_at = now(), updated_at = now(), output = p_output
     WHERE id = p_run.id AND org_id = p_run.org_id AND status = 'running';
    PERFORM pg_notify('charter_runs', p_run.id);
    IF p_run.parent_run_id IS NOT NULL THEN
        PERFORM charter._wake_parent(p_run);
    END IF;
END;
$$;
