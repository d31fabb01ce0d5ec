-- Records an invocation's progress as its runner reports it: status, end time, cost. A run
-- that charter executes itself keeps the status its steps give it (only its cost may be
-- reported here); finishing sets the end time (now, unless given). Returns the invocation.
CREATE OR REPLACE FUNCTION charter.update_invocation(
    p_invocation_id text,
    p_status text DEFAULT NULL,
    p_end_time timestamptz DEFAULT NULL,
    p_usd_cost numeric DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_now timestamptz := now();  -- a value in CASE and coalesce: Citus evaluates no function there
    v_run    charter.runs;
    v_status text;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', p_invocation_id));
    -- Seed 001 knows no orgs: an invocation is a run of the default org.
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_invocation_id AND r.org_id = 'default';
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005',
            MESSAGE = format('Workflow invocation %s not found', p_invocation_id),
            HINT = 'Create it first (create_invocation).';
    END IF;
    IF p_status IS NOT NULL AND p_status NOT IN ('running', 'completed', 'failed', 'cancelled') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('status=%L is not one of running, completed, failed, cancelled', p_status),
            HINT = 'Report one of the run statuses.';
    END IF;
    IF p_usd_cost IS NOT NULL AND p_usd_cost < 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('usd_cost=%s is negative', p_usd_cost), HINT = 'Costs are 0 or more.';
    END IF;
    IF (p_status IS NOT NULL OR p_end_time IS NOT NULL)
       AND NOT v_run.reported THEN
        RAISE EXCEPTION USING ERRCODE = 'CH007',
            MESSAGE = format('Run %s is executed by charter: its status and end time follow its steps', p_invocation_id),
            HINT = 'Use cancel or retry to change it; only its cost can be reported here.';
    END IF;
    v_status := coalesce(p_status, v_run.status);
    IF v_status = 'running' AND p_end_time IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('Invocation %s cannot have an end time while running', p_invocation_id),
            HINT = 'Report the final status together with the end time.';
    END IF;
    UPDATE charter.runs
       SET status = v_status,
           finished_at = CASE WHEN v_status = 'running' THEN NULL
                              ELSE coalesce(p_end_time, finished_at, v_now) END,
           usd_cost = coalesce(p_usd_cost, usd_cost),
           updated_at = now()
     WHERE id = p_invocation_id AND org_id = 'default';
    IF v_status <> 'running' THEN
        PERFORM pg_notify('charter_runs', p_invocation_id);
    END IF;
    RETURN (SELECT jsonb_build_object('invocationId', r.id, 'versionId', r.version_id,
                                      'workflowId', r.workflow_slug, 'status', r.status,
                                      'startTime', r.created_at, 'endTime', r.finished_at,
                                      'usdCost', r.usd_cost, 'warnings', '[]'::jsonb)
              FROM charter.runs AS r WHERE r.id = p_invocation_id AND r.org_id = 'default');
END;
$$;
