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
BEGIN
    PERFORM charter._check_version_arguments(p_workflow_id, v_id, p_dsl, p_commit_message,
                                             p_operation, p_on_existing);
    SELECT coalesce(array_agg(DISTINCT p), '{}') INTO v_parents FROM unnest(p_parent_version_ids) AS p;
    -- Racing creators of one version id (or one new workflow) take turns.
    PERFORM pg_advisory_xact_lock(charter._lock_key('version', v_id));
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', p_workflow_id));

    SELECT * INTO v_existing FROM charter.workflow_versions AS v WHERE v.id = v_id;
    IF FOUND THEN
        RETURN charter._version_recorded_again(v_existing, p_workflow_id, p_dsl, p_commit_message,
                                               p_operation, p_generation_id, v_parents,
                                               p_owner_id, p_on_existing);
    END IF;
    RETURN charter._insert_workflow_version(
        v_id, p_workflow_id, p_dsl, p_commit_message, p_operation, p_generation_id,
        p_parent_version_ids, v_parents, p_owner_id, p_compiled,
        charter._version_parents_ready(v_id, p_workflow_id, v_parents, p_auto_create_parent,
                                       p_commit_message, p_owner_id));
END;
$$;
