-- The published envelope version of an entity type whose contract has version p_version
-- (what a baseRef.envelopeVersion names), or ENTITY_TYPE_UNKNOWN naming the published ones.
CREATE OR REPLACE FUNCTION charter._envelope_version(p_entity_type text, p_version numeric)
RETURNS charter.workflow_versions
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT v.* INTO v_version FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = 'envelope:' || p_entity_type AND v.definition_kind = 'envelope'
       AND (v.contract->>'version')::numeric = p_version
     ORDER BY v.version DESC LIMIT 1;
    IF NOT FOUND THEN
        PERFORM charter._current_contract(p_entity_type);  -- no contract at all: say so
        RAISE EXCEPTION USING ERRCODE = 'CH037',
            MESSAGE = format('Envelope version %s of %L is not published (published: %s)', p_version, p_entity_type,
                             (SELECT string_agg(DISTINCT v.contract->>'version', ', ')
                                FROM charter.workflow_versions AS v
                               WHERE v.workflow_slug = 'envelope:' || p_entity_type AND v.definition_kind = 'envelope')),
            HINT = 'Set baseRef.envelopeVersion to a published contract version, or rebase (client.definitions.rebase(entity_type)).';
    END IF;
    RETURN v_version;
END;
$$;
