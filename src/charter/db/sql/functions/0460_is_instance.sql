-- Whether a run is a document's instance (whose evidence retention never deletes).
CREATE OR REPLACE FUNCTION charter._is_instance(p_run_id text, p_org_id text)
RETURNS boolean
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT EXISTS (SELECT 1 FROM charter.workflow_instances AS i WHERE i.id = p_run_id AND i.org_id = p_org_id);
$$;
