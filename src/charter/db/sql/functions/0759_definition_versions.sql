-- The calling org's versions of its workflow for an entity type, newest first: org
-- definitions (drafts, published, archived) and the effective workflows compiled from them,
-- each with its definition, the envelope version it is on, who made it (a rollback records
-- its actor) and the earlier version a rollback published again.
CREATE OR REPLACE FUNCTION charter.definition_versions(p_org_id text, p_entity_type text)
RETURNS SETOF jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
BEGIN
    PERFORM charter._check_entity_type(p_entity_type);
    PERFORM charter._current_contract(p_entity_type);  -- ENTITY_TYPE_UNKNOWN
    RETURN QUERY
    SELECT jsonb_build_object(
               'versionId', v.id, 'version', v.version, 'status', v.status,
               'kind', v.definition_kind, 'entityType', v.entity_type,
               'envelopeVersion', v.base_ref->'envelopeVersion', 'createdAt', v.created_at,
               'createdBy', v.owner_id, 'hash', v.compiled_hash, 'message', v.commit_message,
               'current', v.id IS NOT DISTINCT FROM w.current_version_id,
               'rollbackOf', (SELECT p.parent_version_id FROM charter.workflow_version_parents AS p
                               WHERE p.version_id = v.id AND p.position = 1),
               'definition', v.dsl)
      FROM charter.workflow_versions AS v
      LEFT JOIN charter.workflows AS w ON w.slug = format('effective:%s:%s', v_org, p_entity_type)
     WHERE v.workflow_slug IN (format('effective:%s:%s', v_org, p_entity_type),
                               format('org:%s:%s', v_org, p_entity_type))
     ORDER BY v.created_at DESC, v.workflow_slug LIKE 'effective:%' DESC, v.version DESC;
END;
$$;
