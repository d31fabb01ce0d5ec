-- Whether an edit the instance has not seen must send the token back through body slot
-- p_slot (WF-03, WF-05): the slot is a stable region, or one of its approval nodes ran in
-- this round (a completed approval's decisions were given on the old version). Work of
-- such a slot that is still active, and a gate it leads to that the workflow has not passed
-- yet, then route as an edit during the body does: the amendment branch or a restart.
CREATE OR REPLACE FUNCTION charter._slot_asks_again(p_instance charter.workflow_instances, p_wf jsonb, p_slot text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_slot IS NULL OR p_slot = 'envelope' THEN
        RETURN false;
    END IF;
    RETURN p_wf->'stableRegionNodes' ? ('sys:slot:' || p_slot || ':in')
        OR EXISTS (SELECT 1 FROM charter.step_states AS s
                    WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status = 'completed'
                      AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'approval'
                      AND p_wf #>> ARRAY['slotMap', s.step_slug] = p_slot);
END;
$$;
