-- Seed 001 § 2: records a version of a workflow. The id is given or generated
-- ('wf_ver_' + 12 hex). A missing workflow is created (WARN) unless p_auto_create_parent is
-- false (WORKFLOW_NOT_FOUND). An existing id of another workflow is VERSION_ID_TAKEN; of the
-- same workflow it follows p_on_existing: 'update' (commit message, generation, owner; INFO),
-- 'skip' (INFO) or 'error' (VERSION_EXISTS). A version's DSL and lineage never change
-- (WORKFLOW_VERSION_IMMUTABLE): record a new version instead. A DSL that is a flow shape is
-- validated and stored as runnable flow steps, with its compiled artifact when the caller
-- sends one (the Python registry compiles flow shapes). Returns {"versionId", "workflowId",
-- "version", "action", "runnable", "warnings"}.
CREATE OR REPLACE FUNCTION charter.create_workflow_version(
    p_workflow_id text,
    p_dsl jsonb,
    p_commit_message text,
    p_operation text,
    p_version_id text DEFAULT NULL,
    p_generation_id text DEFAULT NULL,
    p_parent_version_ids text[] DEFAULT '{}',
    p_owner_id text DEFAULT NULL,
    p_auto_create_parent boolean DEFAULT true,
    p_on_existing text DEFAULT 'update',
    p_compiled jsonb DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_id       text := coalesce(p_version_id, 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12));
    v_existing charter.workflow_versions;
    v_parents  text[];
    v_missing  text;
    v_number   integer;
    v_is_flow  boolean;
    v_warnings jsonb := '[]';
BEGIN
    IF p_workflow_id IS NULL OR btrim(p_workflow_id) = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = 'workflow_id is required',
            HINT = 'Pass the id of the workflow this version belongs to.';
    END IF;
    IF btrim(v_id) = '' OR length(v_id) > 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'wf_version_id must be a non-empty string of at most 200 characters',
            HINT = 'Pass a version id, or none to have one generated.';
    END IF;
    IF p_dsl IS NULL OR jsonb_typeof(p_dsl) = 'null' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = format('Version %s has no dsl', v_id),
            HINT = 'Pass the definition (any JSON) the version records.';
    END IF;
    IF p_commit_message IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020', MESSAGE = format('Version %s has no commit_message', v_id),
            HINT = 'Say what changed in this version.';
    END IF;
    IF p_operation IS NULL OR p_operation NOT IN ('init', 'crossover', 'mutation', 'immigrant') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('operation=%L is not one of init, crossover, mutation, immigrant', p_operation),
            HINT = 'Say how the version was made.';
    END IF;
    IF p_on_existing IS NULL OR p_on_existing NOT IN ('update', 'skip', 'error') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('on_existing=%L is not one of update, skip, error', p_on_existing),
            HINT = 'Choose what happens when the version already exists.';
    END IF;
    SELECT coalesce(array_agg(DISTINCT p), '{}') INTO v_parents FROM unnest(p_parent_version_ids) AS p;
    -- Racing creators of one version id (or one new workflow) take turns.
    PERFORM pg_advisory_xact_lock(charter._lock_key('version', v_id));
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', p_workflow_id));

    SELECT * INTO v_existing FROM charter.workflow_versions AS v WHERE v.id = v_id;
    IF FOUND THEN
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
    END IF;

    SELECT p INTO v_missing FROM unnest(v_parents) AS p
     WHERE NOT EXISTS (SELECT 1 FROM charter.workflow_versions AS v WHERE v.id = p) LIMIT 1;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH015',
            MESSAGE = format('Parent version %s of version %s not found', v_missing, v_id),
            HINT = 'Record parent versions before the versions made from them.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM charter.workflows AS w WHERE w.slug = p_workflow_id) THEN
        IF NOT p_auto_create_parent THEN
            RAISE EXCEPTION USING ERRCODE = 'CH011',
                MESSAGE = format('Workflow %s not found', p_workflow_id),
                HINT = 'Insert the workflow first (ensure_workflow), or allow auto_create_parent.';
        END IF;
        INSERT INTO charter.workflows (slug, description, owner_id)
        VALUES (p_workflow_id, p_commit_message, p_owner_id);
        v_warnings := v_warnings || charter._registry_warning('PARENT_WORKFLOW_AUTO_CREATED',
            format('Workflow not found for version (workflow_id: %s). Auto-creating with description=%L.',
                   p_workflow_id, p_commit_message), 'WARN');
    END IF;

    v_is_flow := jsonb_typeof(p_dsl) = 'object' AND jsonb_typeof(p_dsl->'steps') = 'array'
                 AND jsonb_array_length(p_dsl->'steps') > 0
                 AND jsonb_typeof(p_dsl->'steps'->0->'stepType') = 'string';
    IF v_is_flow THEN
        PERFORM charter._validate_flow_shape(p_workflow_id, p_dsl);
    END IF;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = p_workflow_id;
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, shape, dsl, commit_message, operation,
        generation_id, owner_id, compiled, compiled_hash, compiler_version,
        opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay, opt_limits)
    VALUES (
        v_id, p_workflow_id, v_number, CASE WHEN v_is_flow THEN 'flow' ELSE 'external' END,
        CASE WHEN v_is_flow THEN p_dsl END, p_dsl, p_commit_message, p_operation,
        p_generation_id, p_owner_id,
        CASE WHEN v_is_flow THEN p_compiled END,
        CASE WHEN v_is_flow THEN p_compiled->>'hash' END,
        CASE WHEN v_is_flow THEN p_compiled->>'compilerVersion' END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,maxAttempts}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,baseDelay}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,timeout}')::numeric::integer END,
        CASE WHEN v_is_flow THEN (p_dsl #>> '{options,startDelay}')::numeric::integer END,
        CASE WHEN v_is_flow THEN charter._option_limits(p_dsl->'options') END);
    INSERT INTO charter.workflow_version_parents (version_id, parent_version_id, position)
    SELECT v_id, p, i - 1 FROM unnest(p_parent_version_ids) WITH ORDINALITY AS u(p, i)
     WHERE p = ANY (v_parents)
    ON CONFLICT DO NOTHING;
    IF v_is_flow THEN
        PERFORM charter._insert_flow_steps(v_id, p_dsl);
        -- The first runnable version of a workflow is the one start_run uses by default.
        UPDATE charter.workflows SET current_version_id = v_id, updated_at = now()
         WHERE slug = p_workflow_id AND current_version_id IS NULL;
    END IF;
    RETURN jsonb_build_object('versionId', v_id, 'workflowId', p_workflow_id, 'version', v_number,
                              'action', 'created', 'runnable', v_is_flow, 'warnings', v_warnings);
END;
$$;
