-- Rewrites the projection (seed 002 § Projection Model): the nodes where tokens are.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._instance_projection(p_run text, p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.workflow_instances AS i
       SET current_nodes = coalesce((
               SELECT array_agg(s.step_slug ORDER BY s.step_slug) FROM charter.step_states AS s
                WHERE s.run_id = p_run AND s.org_id = p_org_id AND s.status IN ('ready', 'running')), '{}'),
           updated_at = now()
     WHERE i.id = p_run AND i.org_id = p_org_id;
END;
$$;
