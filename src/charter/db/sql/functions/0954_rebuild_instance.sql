-- The projection of the org's instance, rebuilt from its evidence (WF-15).
CREATE OR REPLACE FUNCTION charter.rebuild_instance(p_org_id text, p_run_id text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                    WHERE i.id = p_run_id AND i.org_id = charter._acting_org(p_org_id)) THEN
        RETURN false;
    END IF;
    PERFORM charter.rebuild_instance_projection(p_run_id, charter._acting_org(p_org_id));
    RETURN true;
END;
$$;
