-- Overwrites an instance's projection with the one derived from evidence (the escape hatch
-- of seed 002 § Projection Model): the instance's status, current nodes, context and epoch
-- (its end time, error and cancel reason kept when they agree with the status, else taken
-- from the evidence) and every readiness row's status, arrivals, skipped arrivals, token and
-- outcome. Timestamps the evidence does not hold (ready_at) are kept. Returns the
-- projection. p_org_id as for get_run.
CREATE OR REPLACE FUNCTION charter.rebuild_instance_projection(p_run_id text, p_org_id text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org        text := charter._run_org(p_run_id, p_org_id);
    v_projection jsonb;
    v_status     text;
    v_active     boolean;
BEGIN
    -- Under the document's lock, as the engine writes the projection (WF-01).
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', i.org_id || '/' || i.document_id))
       FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = v_org;
    v_projection := charter.compute_instance_projection(p_run_id, v_org);
    IF v_projection IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH005', MESSAGE = format('Run %L is not a document workflow instance', p_run_id),
            HINT = 'Pass the runId of Document.workflow.';
    END IF;
    v_status := v_projection->>'status';
    v_active := v_status IN ('running', 'paused');
    -- A projection that says finished where the evidence says running is not a regression.
    PERFORM set_config('charter.admin_override', 'on', true);
    UPDATE charter.workflow_instances AS i
       SET status = v_status,
           current_nodes = ARRAY(SELECT jsonb_array_elements_text(v_projection->'currentNodes')),
           context = v_projection->'context',
           epoch = (v_projection->>'epoch')::integer,
           completed_at = CASE WHEN v_active THEN NULL
                               ELSE coalesce(i.completed_at, (v_projection->>'finishedAt')::timestamptz, now()) END,
           error = CASE WHEN v_status = 'failed' THEN coalesce(i.error, v_projection->'error')
                        WHEN v_status = 'running' THEN NULL ELSE i.error END,
           cancel_reason = CASE WHEN v_status = 'cancelled' THEN coalesce(i.cancel_reason, v_projection->>'cancelReason') END,
           updated_at = now()
     WHERE i.id = p_run_id AND i.org_id = v_org;
    PERFORM set_config('charter.admin_override', '', true);
    UPDATE charter.step_states AS s
       SET status = n.value->>'status',
           arrivals = (n.value->>'arrivals')::integer,
           skipped_arrivals = (n.value->>'skipped')::integer,
           token = n.value->>'token',
           outcome = n.value->>'outcome'
      FROM jsonb_each(v_projection->'nodes') AS n
     WHERE s.run_id = p_run_id AND s.org_id = v_org AND s.step_slug = n.key
       AND (s.status, s.arrivals, s.skipped_arrivals, s.token, s.outcome)
           IS DISTINCT FROM (n.value->>'status', (n.value->>'arrivals')::integer, (n.value->>'skipped')::integer,
                             n.value->>'token', n.value->>'outcome');
    RETURN v_projection;
END;
$$;
