-- Fails a running run at p_step_slug: records the error, cancels its queued and started
-- tasks, marks the step failed and the other ready steps cancelled.
CREATE OR REPLACE FUNCTION charter._fail_run(p_run_id text, p_org_id text, p_step_slug text, p_error jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.runs
       SET status = 'failed', error = p_error, finished_at = now(), updated_at = now()
     WHERE id = p_run_id AND org_id = p_org_id AND status = 'running';
    UPDATE charter.tasks SET status = 'cancelled', available_at = NULL
     WHERE run_id = p_run_id AND org_id = p_org_id AND status IN ('queued', 'started');
    UPDATE charter.step_states
       SET status = CASE WHEN step_slug = p_step_slug THEN 'failed' ELSE 'cancelled' END
     WHERE run_id = p_run_id AND org_id = p_org_id AND (status = 'ready' OR step_slug = p_step_slug);
    DELETE FROM charter.flow_event_waits AS w WHERE w.run_id = p_run_id AND w.org_id = p_org_id;
    PERFORM pg_notify('charter_runs', p_run_id);
    PERFORM charter._wake_parent((SELECT ROW(r.*)::charter.runs FROM charter.runs AS r
                                  WHERE r.id = p_run_id AND r.org_id = p_org_id));
END;
$$;
