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

-- The contracted workflows the documents engine may run (envelopes and effective
-- workflows), for the worker to verify before it applies events to them (WF-07): those not
-- among p_known, with their compiled artifact.
CREATE OR REPLACE FUNCTION charter.engine_versions(p_known text[] DEFAULT '{}')
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('versionId', v.id, 'flow', v.workflow_slug, 'version', v.version,
                              'shape', NULL, 'compiled', v.compiled)
      FROM charter.workflow_versions AS v
     WHERE v.definition_kind IN ('envelope', 'effective') AND NOT (v.id = ANY (coalesce(p_known, '{}')))
     ORDER BY v.workflow_slug, v.version
$$;
