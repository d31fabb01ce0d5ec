-- Cancels every node of the instance that is ready or running, except p_keep.
CREATE OR REPLACE FUNCTION charter._cancel_active(p_instance charter.workflow_instances, p_wf jsonb, p_keep text[], p_reason jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_node text;
BEGIN
    FOR v_node IN SELECT s.step_slug FROM charter.step_states AS s
                   WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status IN ('ready', 'running')
                     AND NOT (s.step_slug = ANY (coalesce(p_keep, '{}')))
                   ORDER BY s.step_slug LOOP
        PERFORM charter._cancel_node(p_instance, p_wf, v_node, p_reason);
    END LOOP;
END;
$$;
