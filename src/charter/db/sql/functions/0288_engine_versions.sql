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
