-- The ancestry tree of a version: {"versionId", "workflowId", "version", "operation",
-- "commitMessage", "generationId", "createdAt", "parents": [tree, ...]}. Lineage is acyclic
-- by construction (parents exist before their children and never change).
CREATE OR REPLACE FUNCTION charter.workflow_lineage(p_version_id text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT * INTO v_version FROM charter.workflow_versions AS v WHERE v.id = p_version_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH014',
            MESSAGE = format('Workflow version %s not found', p_version_id),
            HINT = 'Check the version id.';
    END IF;
    RETURN jsonb_build_object(
        'versionId', v_version.id, 'workflowId', v_version.workflow_slug,
        'version', v_version.version, 'operation', v_version.operation,
        'commitMessage', v_version.commit_message, 'generationId', v_version.generation_id,
        'createdAt', v_version.created_at,
        'parents', coalesce((
            SELECT jsonb_agg(charter.workflow_lineage(p.parent_version_id) ORDER BY p.position)
              FROM charter.workflow_version_parents AS p
             WHERE p.version_id = v_version.id), '[]'::jsonb));
END;
$$;
