-- The edge out of p_from that leads to p_to: directly, or through the body slot attached
-- between them (p_from → slot:in … slot:out → p_to).
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._edge_toward(p_wf jsonb, p_from text, p_to text)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT o.edge_id
          FROM charter._out_edges(p_wf, p_from) AS o
         WHERE o.edge->>'target' = p_to
            OR (p_wf #>> ARRAY['nodes', o.edge->>'target', 'type'] = 'slot_entry'
                AND EXISTS (SELECT 1 FROM charter._out_edges(p_wf,
                                'sys:slot:' || (p_wf #>> ARRAY['nodes', o.edge->>'target', 'config', 'slot']) || ':out') AS x
                             WHERE x.edge->>'target' = p_to))
         ORDER BY o.n
         LIMIT 1
    );
END;
$$;
