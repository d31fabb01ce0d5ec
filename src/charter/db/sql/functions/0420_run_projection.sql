-- The live projection of a run (runs + its readiness rows, see _step_states_of) as JSON, in
-- the same form as compute_run_projection(), so the two can be compared (WF-15).
CREATE OR REPLACE FUNCTION charter.run_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_run charter.runs;
    v_org text := charter._run_org(p_run_id, p_org_id);  -- looked up before the query, not nested in it (Citus)
BEGIN
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = v_org;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN jsonb_build_object(
        'status', v_run.status, 'output', v_run.output, 'error', v_run.error,
        'steps', (SELECT jsonb_object_agg(s.step_slug, jsonb_build_object(
                             'status', s.status, 'required', s.required, 'arrivals', s.arrivals,
                             'initialTasks', s.initial_tasks, 'remainingTasks', s.remaining_tasks))
                    FROM charter._step_states_of(v_run) AS s));
END;
$$;
