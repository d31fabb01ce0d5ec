-- Cancels a running run: its queued and started tasks are cancelled (late results are then
-- stale), its ready steps marked cancelled, its running child runs cancelled with it, and a
-- $run evidence row records it. Cancelling a
-- cancelled run is a no-op; a completed or failed run cannot be cancelled. Returns the status.
-- p_org_id is the run's org (looked up by id when null): another org's run does not exist.
-- A document's workflow instance is cancelled by _cancel_instance (its approvals closed, its
-- waits dropped, its undelivered side effects cancelled, an audit row naming p_actor — the
-- session's role when none is given — and p_reason).
CREATE OR REPLACE FUNCTION charter.cancel_run(
    p_run_id text, p_org_id text DEFAULT NULL, p_actor text DEFAULT NULL, p_reason text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org   text := charter._run_org(p_run_id, p_org_id);
    v_run   charter.runs;
    v_child text;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', p_run_id));
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005',
            MESSAGE = format('Run %L does not exist%s', p_run_id, ' in org ' || quote_literal(v_org)),
            HINT = 'Check the run id (charter status RUN_ID, or list runs with the client).';
    END IF;
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = v_org) THEN
        RETURN charter._cancel_instance(p_run_id, v_org, coalesce(nullif(p_actor, ''), session_user::text), p_reason);
    END IF;
    IF v_run.status = 'cancelled' THEN
        RETURN 'cancelled';
    END IF;
    IF v_run.status <> 'running' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is %s; only a running run can be cancelled', p_run_id, v_run.status),
            HINT = CASE WHEN v_run.status = 'failed' THEN 'A failed run can be retried (charter retry) instead.'
                        ELSE 'There is nothing left to cancel.' END;
    END IF;
    -- Its running children first, each under its own lock (parent's lock, then the child's:
    -- the one order; a finishing child touches only its parent's task row, which is not
    -- locked yet here).
    FOR v_child IN SELECT r.id FROM charter.runs AS r
                    WHERE r.parent_run_id = p_run_id AND r.org_id = v_org AND r.status = 'running'
                    ORDER BY r.id LOOP
        PERFORM pg_advisory_xact_lock(charter._lock_key('run', v_child));
        IF (SELECT r.status FROM charter.runs AS r WHERE r.id = v_child AND r.org_id = v_org) = 'running' THEN
            PERFORM charter.cancel_run(v_child, v_org);
        END IF;
    END LOOP;
    UPDATE charter.runs SET status = 'cancelled', finished_at = now(), updated_at = now()
     WHERE id = p_run_id AND org_id = v_org;
    UPDATE charter.tasks SET status = 'cancelled', available_at = NULL
     WHERE run_id = p_run_id AND org_id = v_org AND status IN ('queued', 'started');
    UPDATE charter.step_states SET status = 'cancelled'
     WHERE run_id = p_run_id AND org_id = v_org AND status = 'ready';
    INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal)
    VALUES (v_org, p_run_id, '$run', 'cancelled', true);
    DELETE FROM charter.flow_event_waits AS w WHERE w.run_id = p_run_id AND w.org_id = v_org;
    PERFORM pg_notify('charter_runs', p_run_id);
    PERFORM charter._wake_parent(v_run);
    RETURN 'cancelled';
END;
$$;
