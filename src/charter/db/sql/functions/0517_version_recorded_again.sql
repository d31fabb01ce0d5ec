-- create_workflow_version for a version id that exists (p_existing): of another workflow it
-- is VERSION_ID_TAKEN; otherwise p_on_existing decides: 'error' (VERSION_EXISTS), 'skip'
-- (INFO) or 'update' of the commit message, generation and owner (INFO). Its DSL, operation
-- and parents never change (WORKFLOW_VERSION_IMMUTABLE). Returns create_workflow_version's
-- result. p_parents: the parents asked for, distinct and sorted.
CREATE OR REPLACE FUNCTION charter._version_recorded_again(
    p_existing charter.workflow_versions,
    p_workflow_id text,
    p_dsl jsonb,
    p_commit_message text,
    p_operation text,
    p_generation_id text,
    p_parents text[],
    p_owner_id text,
    p_on_existing text
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id       text := p_existing.id;
    v_existing charter.workflow_versions := p_existing;
    v_parents  text[] := p_parents;
BEGIN
    IF v_existing.workflow_slug <> p_workflow_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH013',
            MESSAGE = format('Version ID already used by different workflow (wf_version_id: %s belongs to %s, not %s)',
                             v_id, v_existing.workflow_slug, p_workflow_id),
            HINT = 'Version ids are global: choose another id, or none to have one generated.';
    END IF;
    IF p_on_existing = 'error' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH012',
            MESSAGE = format('Workflow version already exists (wf_version_id: %s)', v_id),
            HINT = 'Use on_existing="update" to update its metadata or "skip" to leave it.';
    END IF;
    IF p_on_existing = 'skip' THEN
        RETURN jsonb_build_object('versionId', v_id, 'workflowId', p_workflow_id,
            'version', v_existing.version, 'action', 'skipped',
            'runnable', v_existing.definition_kind = 'flow',
            'warnings', jsonb_build_array(charter._registry_warning('VERSION_EXISTS_SKIPPED',
                format('Workflow version already exists (wf_version_id: %s). Skipping.', v_id), 'INFO')));
    END IF;
    IF v_existing.dsl IS DISTINCT FROM p_dsl
       OR v_existing.operation IS DISTINCT FROM p_operation
       OR v_parents IS DISTINCT FROM coalesce((
            SELECT array_agg(pp.parent_version_id ORDER BY pp.parent_version_id)
              FROM charter.workflow_version_parents AS pp WHERE pp.version_id = v_id), '{}') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH002',
            MESSAGE = format('Workflow version %s cannot change its dsl, operation or parents (WF-04)', v_id),
            HINT = format('Record the change as a new version with parent_version_ids=[%L].', v_id);
    END IF;
    UPDATE charter.workflow_versions
       SET commit_message = p_commit_message,
           generation_id = coalesce(p_generation_id, generation_id),
           owner_id = coalesce(p_owner_id, owner_id)
     WHERE id = v_id;
    RETURN jsonb_build_object('versionId', v_id, 'workflowId', p_workflow_id,
        'version', v_existing.version, 'action', 'updated',
        'runnable', v_existing.definition_kind = 'flow',
        'warnings', jsonb_build_array(charter._registry_warning('VERSION_EXISTS_UPDATED',
            format('Workflow version already exists (wf_version_id: %s). Updating.', v_id), 'INFO')));
END;
$$;
