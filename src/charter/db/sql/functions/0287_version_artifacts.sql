-- The stored artifacts of flow versions, for verification before they run (WF-07): each
-- version's id, workflow, number, shape and compiled artifact (null when it has none).
CREATE OR REPLACE FUNCTION charter.version_artifacts(p_version_ids text[] DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('versionId', v.id, 'flow', v.workflow_slug, 'version', v.version,
                              'shape', v.shape, 'compiled', v.compiled)
      FROM charter.workflow_versions AS v
     WHERE v.definition_kind = 'flow' AND (p_version_ids IS NULL OR v.id = ANY (p_version_ids))
     ORDER BY v.workflow_slug, v.version
$$;
