-- Deletes a flow and everything of it: its runs with their tasks, readiness, inbox,
-- receipts and evidence, then its versions with their steps and dependencies. Nothing of
-- any other flow is touched. Returns {"deleted": false} when the flow did not exist, else
-- {"deleted": true, "runs": N, "versions": N}: what was deleted.
-- Destructive by design, and only ever on request: `charter flows delete SLUG`.
CREATE OR REPLACE FUNCTION charter.delete_flow_and_data(p_flow_slug text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_runs     integer;
    v_versions integer;
BEGIN
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', p_flow_slug));
    IF NOT EXISTS (SELECT 1 FROM charter.workflows AS w WHERE w.slug = p_flow_slug) THEN
        RETURN jsonb_build_object('deleted', false, 'runs', 0, 'versions', 0);
    END IF;
    -- Lets the immutability triggers tell this deliberate deletion from an accident.
    PERFORM set_config('charter.deleting_flow', p_flow_slug, true);
    DELETE FROM charter.step_executions WHERE (run_id, org_id) IN (
        SELECT r.id, r.org_id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.step_receipts WHERE (run_id, org_id) IN (
        SELECT r.id, r.org_id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.inbox WHERE (run_id, org_id) IN (
        SELECT r.id, r.org_id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.step_states WHERE (run_id, org_id) IN (
        SELECT r.id, r.org_id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.tasks WHERE workflow_slug = p_flow_slug;
    DELETE FROM charter.runs WHERE workflow_slug = p_flow_slug;
    GET DIAGNOSTICS v_runs = ROW_COUNT;
    SELECT count(*) INTO v_versions FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = p_flow_slug;
    UPDATE charter.workflows SET current_version_id = NULL WHERE slug = p_flow_slug;
    DELETE FROM charter.workflows WHERE slug = p_flow_slug;
    PERFORM set_config('charter.deleting_flow', '', true);
    RETURN jsonb_build_object('deleted', true, 'runs', v_runs, 'versions', v_versions);
END;
$$;
