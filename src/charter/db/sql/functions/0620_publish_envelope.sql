-- Stores an entity type's system envelope as an immutable default definition
-- (definition_kind 'envelope', workflow 'envelope:<entity type>'; the WF-04 trigger rejects
-- any change). Publishing the same compiled envelope again changes nothing. Returns
-- {"status": published|verified, "workflowId", "versionId", "version"}.
CREATE OR REPLACE FUNCTION charter.publish_envelope(
    p_entity_type text,
    p_envelope jsonb,
    p_compiled jsonb
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_slug    text := 'envelope:' || p_entity_type;
    v_version charter.workflow_versions;
    v_id      text;
    v_number  integer;
BEGIN
    IF p_envelope->>'kind' IS DISTINCT FROM 'envelope' OR p_envelope->>'entityType' IS DISTINCT FROM p_entity_type
       OR p_compiled->>'hash' IS NULL OR p_compiled->>'entityType' IS DISTINCT FROM p_entity_type THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('Not an envelope of entity type %L with its compiled artifact', p_entity_type),
            HINT = 'Pass generate_envelope(contract) and compile_effective(envelope).';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    SELECT * INTO v_version FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_slug AND v.compiled_hash = p_compiled->>'hash'
     ORDER BY v.version DESC LIMIT 1;
    IF FOUND THEN
        RETURN jsonb_build_object('status', 'verified', 'workflowId', v_slug,
                                  'versionId', v_version.id, 'version', v_version.version);
    END IF;
    INSERT INTO charter.workflows (slug, description)
    VALUES (v_slug, format('System envelope of %s', p_entity_type))
    ON CONFLICT (slug) DO NOTHING;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
    v_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, dsl, compiled, compiled_hash,
        compiler_version, commit_message, operation)
    VALUES (v_id, v_slug, v_number, 'envelope', p_envelope, p_compiled, p_compiled->>'hash',
            p_compiled->>'compilerVersion',
            format('envelope version %s generated from the contract', p_envelope->>'envelopeVersion'),
            'init');
    UPDATE charter.workflows SET current_version_id = v_id, updated_at = now() WHERE slug = v_slug;
    RETURN jsonb_build_object('status', 'published', 'workflowId', v_slug, 'versionId', v_id,
                              'version', v_number);
END;
$$;
