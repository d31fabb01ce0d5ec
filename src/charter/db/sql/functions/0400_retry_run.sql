-- Resumes a failed run from where it stopped: completed steps (and completed map elements)
-- are kept; the failed step and the steps cancelled with it are queued again with fresh
-- attempts (a sleep or a wait_event waits again from the start; a child step's failed child
-- is retried when the step runs again). A $run evidence row records the retry. Returns the
-- new status ('running').
-- A document's workflow instance resumes the same way (_retry_instance), its evidence naming
-- p_actor (the session's role when none is given). p_org_id is the run's org (looked up by
-- id when null): another org's run does not exist.
CREATE OR REPLACE FUNCTION charter.retry_run(p_run_id text, p_org_id text DEFAULT NULL, p_actor text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org   text := charter._run_org(p_run_id, p_org_id);
    v_run   charter.runs;
    v_step  record;
    v_child text;
    v_restart text[];
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', p_run_id));
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005',
            MESSAGE = format('Run %L does not exist%s', p_run_id, ' in org ' || quote_literal(v_org)),
            HINT = 'Check the run id (charter status RUN_ID, or list runs with the client).';
    END IF;
    IF v_run.status <> 'failed' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %L is %s; only a failed run can be retried', p_run_id, v_run.status),
            HINT = CASE WHEN v_run.status = 'cancelled' THEN 'Start a new run instead (for a document''s workflow instance: client.documents.restart).'
                        WHEN v_run.status = 'running' THEN 'Wait for it to finish.'
                        ELSE 'It already completed.' END;
    END IF;
    IF EXISTS (SELECT 1 FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = v_org) THEN
        RETURN charter._retry_instance(p_run_id, v_org, coalesce(nullif(p_actor, ''), session_user::text));
    END IF;
    -- The steps to run again, read before the retry is recorded: a chain's steps are read off
    -- its evidence (_step_states_of), where the retry makes the failed step ready again.
    SELECT coalesce(array_agg(s.step_slug), '{}') INTO v_restart
      FROM charter._step_states_of(v_run) AS s WHERE s.status IN ('failed', 'cancelled');
    UPDATE charter.runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now()
     WHERE id = p_run_id AND org_id = v_org;
    INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal)
    VALUES (v_org, p_run_id, '$run', 'retried', true);
    FOR v_step IN
        SELECT fs.slug AS step_slug, fs.step_type, fs.config FROM charter.flow_steps AS fs
         WHERE fs.version_id = v_run.version_id AND fs.slug = ANY (v_restart)
         ORDER BY fs.slug
    LOOP
        -- A waiting step waits again from the start: its task is queued afresh for its
        -- time, its event (or one kept meanwhile) or its timeout.
        IF v_step.step_type IN ('sleep', 'wait_event') THEN
            DELETE FROM charter.tasks AS t
             WHERE t.run_id = p_run_id AND t.step_slug = v_step.step_slug AND t.org_id = v_org
               AND t.status IN ('failed', 'cancelled');
        END IF;
        -- Queues the step's missing tasks (or fails the run again, e.g. a map whose source
        -- is still not an array, after which the remaining steps stay cancelled). Only a map
        -- needs its source: its one dependency's output, or the run input.
        PERFORM charter._start_step(p_run_id, v_org, v_step.step_slug, CASE WHEN v_step.step_type = 'map' THEN
            coalesce((SELECT i.value FROM charter.inbox AS i
                       WHERE i.run_id = p_run_id AND i.target_step = v_step.step_slug
                         AND i.source_step <> v_step.step_slug AND i.spread_index = -1
                         AND i.org_id = v_org),
                     v_run.input) END);
        IF (SELECT r.status FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org) = 'running' THEN
            UPDATE charter.tasks
               SET status = 'queued', attempts = 0, available_at = now(), delivery_token = NULL,
                   worker_id = NULL
             WHERE run_id = p_run_id AND step_slug = v_step.step_slug AND org_id = v_org
               AND status IN ('failed', 'cancelled');
            -- A child step whose child failed: the child is retried and the step waits for
            -- it again (parked first: a child that ends at once wakes it).
            SELECT r.id INTO v_child FROM charter.runs AS r
             WHERE r.parent_run_id = p_run_id AND r.parent_step = v_step.step_slug
               AND r.child_key = '$body' AND r.status = 'failed' AND r.org_id = v_org;
            IF coalesce(v_step.config ? 'child', false) AND v_child IS NOT NULL THEN
                UPDATE charter.tasks SET available_at = 'infinity'
                 WHERE run_id = p_run_id AND step_slug = v_step.step_slug AND org_id = v_org
                   AND status = 'queued';
                PERFORM charter.retry_run(v_child, v_org);
            END IF;
        END IF;
    END LOOP;
    PERFORM pg_notify('charter_tasks', v_run.workflow_slug);
    RETURN (SELECT r.status FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org);
END;
$$;
