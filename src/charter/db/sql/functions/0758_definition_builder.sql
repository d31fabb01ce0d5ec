-- What an editor of the calling org's workflow for an entity type starts from: the contract
-- and envelope of p_envelope_version (NULL: the version the org is on), the newest version
-- published, the org's current org definition and its draft (NULL where there is none).
CREATE OR REPLACE FUNCTION charter.definition_builder(
    p_org_id text, p_entity_type text, p_envelope_version numeric DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_newest   charter.workflow_versions;
    v_envelope charter.workflow_versions;
    v_current  charter.workflow_versions;
    v_draft    charter.workflow_versions;
BEGIN
    PERFORM charter._check_entity_type(p_entity_type);
    v_newest := charter._current_contract(p_entity_type);
    IF p_envelope_version IS NULL THEN
        v_envelope := charter._org_contract(v_org, p_entity_type);
    ELSE
        v_envelope := charter._envelope_version(p_entity_type, p_envelope_version);
    END IF;
    SELECT v.* INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', v_org, p_entity_type);
    SELECT v.* INTO v_draft FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = format('org:%s:%s', v_org, p_entity_type) AND v.status = 'draft'
     ORDER BY v.updated_at DESC, v.version DESC LIMIT 1;
    RETURN jsonb_build_object(
        'entityType', p_entity_type, 'contract', v_envelope.contract, 'envelope', v_envelope.dsl,
        'envelopeVersion', v_envelope.contract->'version',
        'latestEnvelopeVersion', v_newest.contract->'version',
        'currentVersionId', v_current.id, 'definition', v_current.dsl,
        'draftVersionId', v_draft.id, 'draft', v_draft.dsl);
END;
$$;
