-- Saves an org definition as the org's draft for its entity type (one draft at a time:
-- saving again edits it). Returns {"status": "draft", "versionId", "version"}.
CREATE OR REPLACE FUNCTION charter.save_org_draft(
    p_org_id text, p_entity_type text, p_definition jsonb, p_base_ref jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_slug   text := format('org:%s:%s', v_org, p_entity_type);
    v_draft  charter.workflow_versions;
    v_number integer;
BEGIN
    PERFORM charter._current_contract(p_entity_type);  -- the entity type must be published
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    INSERT INTO charter.workflows (slug, org_id, description)
    VALUES (v_slug, v_org, format('Org definitions of %s for %s', p_entity_type, v_org))
    ON CONFLICT (slug) DO NOTHING;
    SELECT * INTO v_draft FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_slug AND v.status = 'draft';
    IF FOUND THEN
        UPDATE charter.workflow_versions SET dsl = p_definition, base_ref = p_base_ref, updated_at = now()
         WHERE id = v_draft.id RETURNING * INTO v_draft;
    ELSE
        SELECT coalesce(max(v.version), 0) + 1 INTO v_number
          FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
        INSERT INTO charter.workflow_versions (
            id, workflow_slug, version, definition_kind, dsl, base_ref, status, org_id, entity_type,
            commit_message, operation)
        VALUES ('wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12), v_slug, v_number,
                'org_patch', p_definition, p_base_ref, 'draft', v_org, p_entity_type, 'draft', 'init')
        RETURNING * INTO v_draft;
    END IF;
    RETURN jsonb_build_object('status', 'draft', 'versionId', v_draft.id, 'version', v_draft.version,
                              'kind', 'org_patch');
END;
$$;
