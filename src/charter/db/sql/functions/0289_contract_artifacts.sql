-- What compiling a contracted workflow again needs (charter recompile): each envelope and
-- effective version with its artifact, the envelope it was compiled from (an envelope's
-- own; an effective workflow's: the envelope version current for its entity type when it
-- was published, i.e. the newest one not newer than it) and, for an effective workflow,
-- the org definition it was compiled from (its parent org patch).
CREATE OR REPLACE FUNCTION charter.contract_artifacts()
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
               'versionId', v.id, 'flow', v.workflow_slug, 'version', v.version, 'kind', v.definition_kind,
               'compiled', v.compiled,
               'envelope', CASE WHEN v.definition_kind = 'envelope' THEN v.dsl ELSE (
                   SELECT e.dsl FROM charter.workflow_versions AS e
                    WHERE e.definition_kind = 'envelope' AND e.entity_type = v.entity_type
                      AND e.created_at <= v.created_at
                    ORDER BY e.created_at DESC LIMIT 1) END,
               'orgDefinition', (SELECT p.dsl FROM charter.workflow_version_parents AS l
                                   JOIN charter.workflow_versions AS p ON p.id = l.parent_version_id
                                  WHERE l.version_id = v.id AND p.definition_kind = 'org_patch' LIMIT 1))
      FROM charter.workflow_versions AS v
     WHERE v.definition_kind IN ('envelope', 'effective')
     ORDER BY v.workflow_slug, v.version
$$;
