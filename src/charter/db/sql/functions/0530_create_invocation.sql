-- Seed 001 § 3: records an invocation — a run — of a version, strictly. The id is required
-- and never generated (INVOCATION_ID_REQUIRED); the version must exist (VERSION_NOT_FOUND)
-- and, when p_workflow_id is given, belong to it (WORKFLOW_MISMATCH). An existing id of
-- another version is INVOCATION_ID_TAKEN; of the same version it follows p_on_existing:
-- 'update' (owner and evolution context; INFO) or 'error' (INVOCATION_EXISTS). An evolution
-- run id without a generation id, or the reverse, is recorded with a WARN warning.
-- Seed 001 knows no orgs: an invocation is a run of the default org.
-- Defaults: status running, start time now, cost 0. Returns {"invocationId", "versionId",
-- "workflowId", "action", "warnings"}.
CREATE OR REPLACE FUNCTION charter.create_invocation(
    p_invocation_id text,
    p_version_id text,
    p_workflow_id text DEFAULT NULL,
    p_run_id text DEFAULT NULL,
    p_generation_id text DEFAULT NULL,
    p_owner_id text DEFAULT NULL,
    p_on_existing text DEFAULT 'update'
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_version  charter.workflow_versions;
    v_existing charter.runs;
    v_warnings jsonb := '[]';
BEGIN
    IF p_invocation_id IS NULL OR btrim(p_invocation_id) = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH016',
            MESSAGE = 'Workflow invocation ID is required. Cannot auto-generate.',
            HINT = 'Invocations are created by a workflow runner and must have the id it knows them by.';
    END IF;
    IF length(p_invocation_id) > 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'wf_invocation_id must be at most 200 characters', HINT = 'Use a shorter id.';
    END IF;
    IF p_on_existing IS NULL OR p_on_existing NOT IN ('update', 'error') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('on_existing=%L is not one of update, error', p_on_existing),
            HINT = 'An invocation cannot be skipped: decide to update it or to fail.';
    END IF;
    SELECT * INTO v_version FROM charter.workflow_versions AS v WHERE v.id = p_version_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH014',
            MESSAGE = format('Workflow version %s not found', p_version_id),
            HINT = 'Record the version first (create_workflow_version); invocations never create it.';
    END IF;
    IF p_workflow_id IS NOT NULL AND p_workflow_id <> v_version.workflow_slug THEN
        RAISE EXCEPTION USING ERRCODE = 'CH019',
            MESSAGE = format('Workflow version %s belongs to workflow %s, not %s',
                             p_version_id, v_version.workflow_slug, p_workflow_id),
            HINT = 'Pass the version''s own workflow_id, or leave it out to infer it.';
    END IF;
    IF p_run_id IS NOT NULL AND p_generation_id IS NULL THEN
        v_warnings := v_warnings || charter._registry_warning('EVOLUTION_GENERATION_MISSING',
            'Evolution tracking inconsistency: run_id provided without generation_id', 'WARN');
    ELSIF p_generation_id IS NOT NULL AND p_run_id IS NULL THEN
        v_warnings := v_warnings || charter._registry_warning('EVOLUTION_RUN_MISSING',
            'Evolution tracking inconsistency: generation_id provided without run_id', 'WARN');
    END IF;

    INSERT INTO charter.runs (id, workflow_slug, version_id, input, owner_id, generation_id,
                              evolution_run_id, reported)
    VALUES (p_invocation_id, v_version.workflow_slug, p_version_id, 'null', p_owner_id,
            p_generation_id, p_run_id, true)
    ON CONFLICT (id, org_id) DO NOTHING;
    IF FOUND THEN
        RETURN jsonb_build_object('invocationId', p_invocation_id, 'versionId', p_version_id,
            'workflowId', v_version.workflow_slug, 'action', 'created', 'warnings', v_warnings);
    END IF;

    SELECT * INTO v_existing FROM charter.runs AS r
     WHERE r.id = p_invocation_id AND r.org_id = 'default' FOR UPDATE;
    IF v_existing.version_id <> p_version_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH018',
            MESSAGE = format('Invocation ID already used for different workflow version (wf_invocation_id: %s is an invocation of %s, not %s)',
                             p_invocation_id, v_existing.version_id, p_version_id),
            HINT = 'Invocation ids name one invocation: choose a new id.';
    END IF;
    IF p_on_existing = 'error' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH017',
            MESSAGE = format('Workflow invocation already exists (wf_invocation_id: %s)', p_invocation_id),
            HINT = 'Use on_existing="update" to update it.';
    END IF;
    UPDATE charter.runs
       SET owner_id = coalesce(p_owner_id, owner_id),
           generation_id = coalesce(p_generation_id, generation_id),
           evolution_run_id = coalesce(p_run_id, evolution_run_id),
           updated_at = now()
     WHERE id = p_invocation_id AND org_id = 'default';
    RETURN jsonb_build_object('invocationId', p_invocation_id, 'versionId', p_version_id,
        'workflowId', v_version.workflow_slug, 'action', 'updated',
        'warnings', v_warnings || charter._registry_warning('INVOCATION_EXISTS_UPDATED',
            format('Workflow invocation already exists (wf_invocation_id: %s). Updating.', p_invocation_id),
            'INFO'));
END;
$$;
