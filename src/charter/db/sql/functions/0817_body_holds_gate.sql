-- Whether an edit must send the token waiting at gate p_gate back through its body (WF-03,
-- WF-05): the gate is ready (its body finished, the workflow has not passed it yet) and
-- its body is a stable region or holds an approval node that ran in this round. An edit
-- that lands then routes as one during the body: the amendment branch or a restart.
CREATE OR REPLACE FUNCTION charter._body_holds_gate(p_instance charter.workflow_instances, p_wf jsonb, p_gate text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_slots text[] := charter._body_slots(p_wf, p_gate);
BEGIN
    IF cardinality(v_slots) = 0 THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT 1 FROM unnest(v_slots) AS b(slot)
                    WHERE p_wf->'stableRegionNodes' ? ('sys:slot:' || b.slot || ':in'))
        OR EXISTS (SELECT 1 FROM charter.step_states AS s
                    WHERE s.run_id = p_instance.id AND s.org_id = p_instance.org_id AND s.status = 'completed'
                      AND p_wf #>> ARRAY['nodes', s.step_slug, 'type'] = 'approval'
                      AND p_wf #>> ARRAY['slotMap', s.step_slug] = ANY (v_slots));
END;
$$;
