-- A step finished with p_output: write it to each successor's inbox, count the arrival, start
-- successors that became ready (exactly once: when arrivals reach required), and complete the
-- run when $end has heard from every leaf step. Runs under the run's advisory lock.
-- (The output of a run's only last step is kept in the run's output, not in the inbox.)
CREATE OR REPLACE FUNCTION charter._complete_step(p_run_id text, p_org_id text, p_step_slug text, p_output jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_run       charter.runs;
    v_target    text;
    v_arrivals  integer;
    v_required  integer;
    v_now       timestamptz := now();  -- a value in the CASE below: Citus evaluates no function there
BEGIN
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = p_org_id;
    -- A chain's run keeps no readiness rows: each arrival is its node's only one, so the
    -- step's one dependent is ready with it, and with none the run is complete.
    IF NOT charter._keeps_readiness(v_run.version_id) THEN
        SELECT d.step_slug INTO v_target FROM charter.flow_step_deps AS d
         WHERE d.version_id = v_run.version_id AND d.dep_slug = p_step_slug;
        IF NOT FOUND THEN
            PERFORM charter._run_completed(v_run, jsonb_build_object(p_step_slug, p_output));
            RETURN;
        END IF;
        INSERT INTO charter.inbox (run_id, target_step, source_step, org_id, value)
        VALUES (p_run_id, v_target, p_step_slug, p_org_id, p_output);
        PERFORM charter._start_step(p_run_id, p_org_id, v_target, p_output);
        RETURN;
    END IF;
    UPDATE charter.step_states
       SET status = 'completed', remaining_tasks = 0, completed_at = now()
     WHERE run_id = p_run_id AND step_slug = p_step_slug AND org_id = p_org_id;

    FOR v_target IN
        SELECT d.step_slug FROM charter.flow_step_deps AS d
         WHERE d.version_id = v_run.version_id AND d.dep_slug = p_step_slug
        UNION ALL
        SELECT '$end' WHERE NOT EXISTS (
            SELECT 1 FROM charter.flow_step_deps AS d
             WHERE d.version_id = v_run.version_id AND d.dep_slug = p_step_slug)
        ORDER BY 1
    LOOP
        -- $end completes with its last arrival in the same statement.
        UPDATE charter.step_states
           SET arrivals = arrivals + 1,
               status = CASE WHEN v_target = '$end' AND arrivals + 1 = required THEN 'completed' ELSE status END,
               completed_at = CASE WHEN v_target = '$end' AND arrivals + 1 = required THEN v_now ELSE completed_at END
         WHERE run_id = p_run_id AND step_slug = v_target AND org_id = p_org_id
           AND arrivals < required
        RETURNING arrivals, required INTO v_arrivals, v_required;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH009',
                MESSAGE = format('Readiness overflow: step %L of run %L received more arrivals than it has dependencies', v_target, p_run_id),
                HINT = 'This is a bug in charter; the transaction was rolled back and nothing changed.';
        END IF;
        -- A run with one last step takes its output straight from it: no inbox row for $end.
        IF v_target <> '$end' OR v_required > 1 THEN
            INSERT INTO charter.inbox (run_id, target_step, source_step, org_id, value)
            VALUES (p_run_id, v_target, p_step_slug, p_org_id, p_output);
        END IF;
        CONTINUE WHEN v_arrivals < v_required;
        IF v_target = '$end' THEN
            PERFORM charter._run_completed(v_run, CASE WHEN v_required = 1 THEN jsonb_build_object(p_step_slug, p_output)
                                                       ELSE (SELECT jsonb_object_agg(i.source_step, i.value)
                                                               FROM charter.inbox AS i
                                                              WHERE i.run_id = p_run_id AND i.target_step = '$end'
                                                                AND i.org_id = p_org_id) END);
        ELSE
            PERFORM charter._start_step(p_run_id, p_org_id, v_target, p_output);
        END IF;
    END LOOP;
END;
$$;
