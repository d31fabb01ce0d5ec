-- Deletes a flow and everything of it: its runs with their tasks, readiness, inbox,
-- receipts and evidence, then its versions with their steps and dependencies. Nothing of
-- any other flow is touched. Returns false when the flow did not exist.
-- Destructive by design, and only ever on request: `charter flows delete SLUG`.
CREATE OR REPLACE FUNCTION charter.delete_flow_and_data(p_flow_slug text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_found boolean;
BEGIN
    -- Lets the immutability triggers tell this deliberate deletion from an accident.
    PERFORM set_config('charter.deleting_flow', p_flow_slug, true);
    DELETE FROM charter.step_executions WHERE run_id IN (
        SELECT r.id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.step_receipts WHERE run_id IN (
        SELECT r.id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.inbox WHERE run_id IN (
        SELECT r.id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.step_states WHERE run_id IN (
        SELECT r.id FROM charter.runs AS r WHERE r.workflow_slug = p_flow_slug);
    DELETE FROM charter.tasks WHERE workflow_slug = p_flow_slug;
    DELETE FROM charter.runs WHERE workflow_slug = p_flow_slug;
    UPDATE charter.workflows SET current_version_id = NULL WHERE slug = p_flow_slug;
    DELETE FROM charter.workflows WHERE slug = p_flow_slug;
    v_found := FOUND;
    PERFORM set_config('charter.deleting_flow', '', true);
    RETURN v_found;
END;
$$;
