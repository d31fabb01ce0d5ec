-- Whether an edit the instance has not seen must send the token back through body slot
-- p_slot (WF-03, WF-05): the slot is a stable region, or it holds an approval node — one
-- that ran was given on the old version, and one a condition skipped was skipped on the
-- old version's data. Work of such a slot that is still active, and a gate it leads to
-- that the workflow has not passed yet, then route as an edit during the body does: the
-- amendment branch or a restart of the body on the new version.
CREATE OR REPLACE FUNCTION charter._slot_asks_again(p_wf jsonb, p_slot text)
RETURNS boolean
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    IF p_slot IS NULL OR p_slot = 'envelope' THEN
        RETURN false;
    END IF;
    RETURN p_wf->'stableRegionNodes' ? ('sys:slot:' || p_slot || ':in')
        OR EXISTS (SELECT 1 FROM jsonb_each(p_wf->'slotMap') AS m(node, slot)
                    WHERE m.slot = to_jsonb(p_slot)
                      AND p_wf #>> ARRAY['nodes', m.node, 'type'] = 'approval');
END;
$$;
