-- The slots whose exit leads to gate p_gate: the bodies whose work that gate passes on.
-- A SQL-standard body (no SET clause needed): its names are bound when it is created.
CREATE OR REPLACE FUNCTION charter._body_slots(p_wf jsonb, p_gate text)
RETURNS text[]
LANGUAGE sql
IMMUTABLE
BEGIN ATOMIC
    SELECT coalesce(array_agg(DISTINCT p_wf #>> ARRAY['nodes', e.edge->>'source', 'config', 'slot']), '{}')
      FROM jsonb_array_elements_text(coalesce(p_wf #> ARRAY['reverseAdjacency', p_gate], '[]')) AS a(edge_id)
     CROSS JOIN LATERAL (SELECT p_wf #> ARRAY['edgesById', a.edge_id] AS edge) AS e
     WHERE p_wf #>> ARRAY['nodes', e.edge->>'source', 'type'] = 'slot_exit';
END;
