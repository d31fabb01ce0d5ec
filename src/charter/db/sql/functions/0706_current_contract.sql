-- The contract a document follows (its envelope version's), or ENTITY_TYPE_UNKNOWN.
CREATE OR REPLACE FUNCTION charter._current_contract(p_entity_type text)
RETURNS charter.workflow_versions
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT v.* INTO v_version
      FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = 'envelope:' || p_entity_type AND v.contract IS NOT NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH037',
            MESSAGE = format('No contract is published for entity type %L', p_entity_type),
            HINT = 'Publish its entity contract first: charter publish CONTRACT.json (or client.definitions.publish).';
    END IF;
    RETURN v_version;
END;
$$;
