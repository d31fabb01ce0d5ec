-- What a rebase of the calling org onto the newest contract of an entity type starts from:
-- the newest contract's envelope and its version, the version the org is on, and the org's
-- current effective workflow with the org definition it was compiled from (none: the bare
-- envelope).
-- The client recompiles that definition on the new envelope and hands it to rebase_definition.
CREATE OR REPLACE FUNCTION charter.rebase_source(p_org_id text, p_entity_type text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_newest  charter.workflow_versions;
    v_on      charter.workflow_versions;
    v_current charter.workflow_versions;
BEGIN
    IF p_entity_type IS NULL OR p_entity_type !~ '^[a-z][a-z0-9_]*$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L is not an entity type', p_entity_type),
            HINT = 'Entity types are lower-case names of letters, digits and _ (e.g. ap_invoice).';
    END IF;
    v_newest := charter._current_contract(p_entity_type);
    v_on := charter._org_contract(v_org, p_entity_type);
    SELECT v.* INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', v_org, p_entity_type);
    RETURN jsonb_build_object('entityType', p_entity_type, 'envelope', v_newest.dsl,
                              'envelopeVersion', v_newest.contract->'version',
                              'onEnvelopeVersion', v_on.contract->'version',
                              'currentVersionId', v_current.id, 'definition', v_current.dsl);
END;
$$;
