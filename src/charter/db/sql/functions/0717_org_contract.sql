-- The contract (envelope version) an org is on for an entity type: the version it is
-- pinned to, or, for an org that has not used the type yet, the newest published one
-- (ENTITY_TYPE_UNKNOWN when none is). Reads only; _pin_contract pins at first use.
CREATE OR REPLACE FUNCTION charter._org_contract(p_org_id text, p_entity_type text)
RETURNS charter.workflow_versions
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT v.* INTO v_version
      FROM charter.org_contracts AS p
      JOIN charter.workflow_versions AS v ON v.id = p.envelope_version_id
     WHERE p.org_id = p_org_id AND p.entity_type = p_entity_type;
    IF NOT FOUND THEN
        v_version := charter._current_contract(p_entity_type);
    END IF;
    RETURN v_version;
END;
$$;
