-- Resumes a failed run from where it stopped: completed steps (and completed map elements)
-- are kept; the failed step and the steps cancelled with it are queued again with fresh
-- attempts. A $run evidence row records the retry. Returns the new status ('running').
-- A document's workflow instance resumes the same way (_retry_instance).
CREATE OR REPLACE FUNCTION charter.retry_run(p_run_id text)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_run  charter.runs;
    v_step record;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', p_run_id));
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L does not exist', p_run_id),
            HINT = 'Check the run id (charter status RUN_ID, or list runs with the client).';
    END IF;
    IF v_run.status <> 'failed' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is %s; only a failed run can be retried', p_run_id, v_run.status),
            HINT = CASE WHEN v_run.status = 'cancelled' THEN 'Start a new run instead.'
                        WHEN v_run.status = 'running' THEN 'Wait for it to finish.'
                        ELSE 'It already completed.' END;
    END IF;
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i WHERE i.id = p_run_id) THEN
        RETURN charter._retry_instance(p_run_id);
    END IF;
    UPDATE charter.runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now()
     WHERE id = p_run_id;
    INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal)
    VALUES (v_run.org_id, p_run_id, '$run', 'retried', true);
    FOR v_step IN
        SELECT s.step_slug, fs.step_type FROM charter.step_states AS s
          JOIN charter.flow_steps AS fs ON fs.version_id = v_run.version_id AND fs.slug = s.step_slug
         WHERE s.run_id = p_run_id AND s.status IN ('failed', 'cancelled')
         ORDER BY s.step_slug
    LOOP
        -- Queues the step's missing tasks (or fails the run again, e.g. a map whose source
        -- is still not an array, after which the remaining steps stay cancelled). Only a map
        -- needs its source: its one dependency's output, or the run input.
        PERFORM charter._start_step(p_run_id, v_step.step_slug, CASE WHEN v_step.step_type = 'map' THEN
            coalesce((SELECT i.value FROM charter.inbox AS i
                       WHERE i.run_id = p_run_id AND i.target_step = v_step.step_slug
                         AND i.source_step <> v_step.step_slug AND i.spread_index = -1),
                     v_run.input) END);
        IF (SELECT r.status FROM charter.runs AS r WHERE r.id = p_run_id) = 'running' THEN
            UPDATE charter.tasks
               SET status = 'queued', attempts = 0, available_at = now(), delivery_token = NULL,
                   worker_id = NULL
             WHERE run_id = p_run_id AND step_slug = v_step.step_slug
               AND status IN ('failed', 'cancelled');
        END IF;
    END LOOP;
    PERFORM pg_notify('charter_tasks', v_run.workflow_slug);
    RETURN (SELECT r.status FROM charter.runs AS r WHERE r.id = p_run_id);
END;
$$;
