-- The live projection of a run (runs + its readiness rows, see _step_states_of) as JSON, in
-- the same form as compute_run_projection(), so the two can be compared (WF-15).
CREATE OR REPLACE FUNCTION charter.run_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'status', r.status, 'output', r.output, 'error', r.error,
        'steps', (SELECT jsonb_object_agg(s.step_slug, jsonb_build_object(
                             'status', s.status, 'required', s.required, 'arrivals', s.arrivals,
                             'initialTasks', s.initial_tasks, 'remainingTasks', s.remaining_tasks))
                    FROM charter._step_states_of(r) AS s))
      FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = charter._run_org(p_run_id, p_org_id)
$$;
