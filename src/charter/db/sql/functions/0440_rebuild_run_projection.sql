-- Overwrites a run's projection (runs status/output/error, step_states) with the one
-- derived from the facts (compute_run_projection) and returns it: the self-healing escape
-- hatch of WF-15. Under the run's advisory lock. p_org_id is the run's org (looked up by
-- id when null).
CREATE OR REPLACE FUNCTION charter.rebuild_run_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_now timestamptz := now();  -- a value in CASE and coalesce: Citus evaluates no function there
    v_org        text := charter._run_org(p_run_id, p_org_id);
    v_projection jsonb;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', p_run_id));
    v_projection := charter.compute_run_projection(p_run_id, v_org);
    IF v_projection IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L does not exist', p_run_id),
            HINT = 'Check the run id.';
    END IF;
    UPDATE charter.runs AS r
       SET status = v_projection->>'status',
           output = v_projection->'output',
           error = v_projection->'error',
           finished_at = CASE WHEN v_projection->>'status' = 'running' THEN NULL
                              ELSE coalesce(r.finished_at, v_now) END,
           updated_at = now()
     WHERE r.id = p_run_id AND r.org_id = v_org;
    UPDATE charter.step_states AS s
       SET status = p.value->>'status',
           required = (p.value->>'required')::integer,
           arrivals = (p.value->>'arrivals')::integer,
           initial_tasks = (p.value->>'initialTasks')::integer,
           remaining_tasks = (p.value->>'remainingTasks')::integer
      FROM jsonb_each(v_projection->'steps') AS p
     WHERE s.run_id = p_run_id AND s.org_id = v_org AND s.step_slug = p.key;
    RETURN v_projection;
END;
$$;
