-- Publishes an org definition compiled against the envelope version its baseRef names (any
-- published version of the contract): the org patch is frozen (the draft with the same
-- definition is promoted), the effective workflow becomes current for (org, entity type),
-- and the org is on that envelope version from then on (new documents validate against its
-- contract). The same effective workflow again is 'verified'. Instances already running
-- stay on their version, documents on their contract.
CREATE OR REPLACE FUNCTION charter.publish_org_definition(
    p_org_id text, p_entity_type text, p_definition jsonb, p_base_ref jsonb, p_compiled jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_patches  text := format('org:%s:%s', v_org, p_entity_type);
    v_slug     text := format('effective:%s:%s', v_org, p_entity_type);
    v_current  charter.workflow_versions;
    v_envelope charter.workflow_versions;
    v_patch_id text;
    v_id       text;
    v_number   integer;
BEGIN
    PERFORM charter._current_contract(p_entity_type);  -- the entity type must be published
    IF p_compiled->>'hash' IS NULL OR p_compiled->>'entityType' IS DISTINCT FROM p_entity_type THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('Not a compiled effective workflow of %L', p_entity_type),
            HINT = 'Publish with client.definitions.publish(contract, org_definition).';
    END IF;
    IF jsonb_typeof(p_base_ref->'envelopeVersion') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The org definition names no envelope version of %L (baseRef.envelopeVersion)', p_entity_type),
            HINT = 'Set baseRef.envelopeVersion to a published contract''s version and compile again.';
    END IF;
    v_envelope := charter._envelope_version(p_entity_type, (p_base_ref->>'envelopeVersion')::numeric);
    IF p_compiled->'envelopeVersion' IS DISTINCT FROM v_envelope.contract->'version' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The org definition is for envelope version %s of %L, but its compiled workflow is for version %s',
                             p_base_ref->>'envelopeVersion', p_entity_type, coalesce(p_compiled->>'envelopeVersion', 'none')),
            HINT = 'Compile the org definition against the envelope its baseRef names (client.definitions.publish does).';
    END IF;
    -- What the compiler would refuse is refused here too, whoever calls (WF-06, WF-07,
    -- WF-08, edit windows never looser, expressions): see charter._verify_effective.
    PERFORM charter._verify_effective(p_compiled, v_envelope);
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_patches));
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    SELECT v.* INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = v_slug;
    IF FOUND AND v_current.compiled_hash = p_compiled->>'hash' THEN
        PERFORM charter._move_org_contract(v_org, p_entity_type, v_envelope.id);
        RETURN jsonb_build_object('status', 'verified', 'versionId', v_current.id,
                                  'version', v_current.version, 'hash', v_current.compiled_hash,
                                  'kind', 'effective', 'envelopeVersion', v_envelope.contract->'version');
    END IF;
    INSERT INTO charter.workflows (slug, org_id, description)
    VALUES (v_patches, v_org, format('Org definitions of %s for %s', p_entity_type, v_org)),
           (v_slug, v_org, format('Effective workflow of %s for %s', p_entity_type, v_org))
    ON CONFLICT (slug) DO NOTHING;
    SELECT v.id INTO v_patch_id FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_patches AND v.status = 'draft' AND v.dsl = p_definition;
    IF FOUND THEN
        UPDATE charter.workflow_versions SET status = 'published', base_ref = p_base_ref, updated_at = now()
         WHERE id = v_patch_id;
    ELSE
        SELECT coalesce(max(v.version), 0) + 1 INTO v_number
          FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_patches;
        v_patch_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
        INSERT INTO charter.workflow_versions (
            id, workflow_slug, version, definition_kind, dsl, base_ref, status, org_id, entity_type,
            commit_message, operation)
        VALUES (v_patch_id, v_patches, v_number, 'org_patch', p_definition, p_base_ref, 'published',
                v_org, p_entity_type, 'published', 'init');
    END IF;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
    v_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, dsl, base_ref, compiled, compiled_hash,
        compiler_version, status, org_id, entity_type, commit_message, operation)
    VALUES (v_id, v_slug, v_number, 'effective', p_definition, p_base_ref, p_compiled,
            p_compiled->>'hash', p_compiled->>'compilerVersion', 'published', v_org, p_entity_type,
            format('compiled from org definition %s', v_patch_id), 'init');
    INSERT INTO charter.workflow_version_parents (version_id, parent_version_id, position)
    VALUES (v_id, v_patch_id, 0);
    UPDATE charter.workflows SET current_version_id = v_id, updated_at = now() WHERE slug = v_slug;
    PERFORM charter._move_org_contract(v_org, p_entity_type, v_envelope.id);
    RETURN jsonb_build_object('status', 'published', 'versionId', v_id, 'version', v_number,
                              'hash', p_compiled->>'hash', 'kind', 'effective',
                              'orgPatchVersionId', v_patch_id, 'envelopeVersion', v_envelope.contract->'version');
END;
$$;
