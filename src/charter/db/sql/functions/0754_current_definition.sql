-- The workflow documents of an entity type follow in the calling org: the org's current
-- effective workflow, else the bare envelope of the version the org is on (for an org that
-- has not used the type yet, the newest). Says which envelope version the org is on
-- (envelopeVersion) and which is the newest published (latestEnvelopeVersion).
CREATE OR REPLACE FUNCTION charter.current_definition(p_org_id text, p_entity_type text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_version  charter.workflow_versions;
    v_envelope charter.workflow_versions;
BEGIN
    -- An entity type is a plain name: 'eu:ap_invoice' must not reach another org's slug.
    IF p_entity_type IS NULL OR p_entity_type !~ '^[a-z][a-z0-9_]*$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L is not an entity type', p_entity_type),
            HINT = 'Entity types are lower-case names of letters, digits and _ (e.g. ap_invoice).';
    END IF;
    v_envelope := charter._org_contract(v_org, p_entity_type);
    SELECT v.* INTO v_version FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', v_org, p_entity_type);
    IF NOT FOUND THEN
        v_version := v_envelope;
    END IF;
    RETURN jsonb_build_object('status', v_version.status, 'versionId', v_version.id,
                              'version', v_version.version, 'hash', v_version.compiled_hash,
                              'kind', v_version.definition_kind, 'compiled', v_version.compiled,
                              'envelopeVersion', v_envelope.contract->'version',
                              'envelopeVersionId', v_envelope.id,
                              'latestEnvelopeVersion', (charter._current_contract(p_entity_type)).contract->'version');
END;
$$;
