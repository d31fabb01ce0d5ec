-- The contract a new document of the org follows (mutate's create): the version the org is
-- pinned to; at the org's first use of the entity type, the newest published one, which it
-- is pinned to from then on (a new contract version changes nothing for it until it
-- publishes a definition on that version or rebases). Two first uses at once pin one version.
CREATE OR REPLACE FUNCTION charter._pin_contract(p_org_id text, p_entity_type text)
RETURNS charter.workflow_versions
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT v.* INTO v_version
      FROM charter.org_contracts AS p
      JOIN charter.workflow_versions AS v ON v.id = p.envelope_version_id
     WHERE p.org_id = p_org_id AND p.entity_type = p_entity_type;
    IF FOUND THEN
        RETURN v_version;
    END IF;
    v_version := charter._current_contract(p_entity_type);
    INSERT INTO charter.org_contracts (org_id, entity_type, envelope_version_id)
    VALUES (p_org_id, p_entity_type, v_version.id)
    ON CONFLICT (org_id, entity_type) DO NOTHING;
    IF NOT FOUND THEN  -- pinned by a first use that committed while this one waited
        SELECT v.* INTO v_version
          FROM charter.org_contracts AS p
          JOIN charter.workflow_versions AS v ON v.id = p.envelope_version_id
         WHERE p.org_id = p_org_id AND p.entity_type = p_entity_type;
    END IF;
    RETURN v_version;
END;
$$;
