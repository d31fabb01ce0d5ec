-- Publishes an earlier published org definition of the calling org again (p_version_id: its
-- org definition or the effective workflow compiled from it; p_definition and p_compiled:
-- its definition and the client's compilation of it, checked as any publish is): a new
-- effective workflow becomes current, recording p_actor and the version it restores.
-- Running instances stay on their version; new documents follow the restored one. Returns
-- what publish_org_definition returns ('verified' when it is current already).
CREATE OR REPLACE FUNCTION charter.rollback_definition(
    p_org_id text, p_entity_type text, p_version_id text, p_definition jsonb, p_compiled jsonb,
    p_actor text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_old    charter.workflow_versions;
    v_result jsonb;
BEGIN
    SELECT v.* INTO v_old FROM charter.workflow_versions AS v
     WHERE v.id = p_version_id AND v.org_id = v_org AND v.definition_kind IN ('org_patch', 'effective')
       AND v.workflow_slug IN (format('org:%s:%s', v_org, v.entity_type),
                               format('effective:%s:%s', v_org, v.entity_type));
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH040',
            MESSAGE = format('Org %s has no definition version %L', v_org, p_version_id),
            HINT = 'List the versions: GET /api/definitions/{entity_type}/versions (client.definitions.versions).';
    END IF;
    IF v_old.entity_type IS DISTINCT FROM p_entity_type THEN
        RAISE EXCEPTION USING ERRCODE = 'CH121',
            MESSAGE = format('Version %s is a definition of %s, not of %s', p_version_id, v_old.entity_type, p_entity_type),
            HINT = 'Roll back to a version of the same entity type.';
    END IF;
    IF v_old.status <> 'published' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH121',
            MESSAGE = format('Version %s of %s is %s: only a published version can be published again',
                             p_version_id, p_entity_type, v_old.status),
            HINT = 'Publish a draft with client.definitions.publish; roll back to a published version.';
    END IF;
    IF v_old.dsl IS DISTINCT FROM p_definition THEN
        RAISE EXCEPTION USING ERRCODE = 'CH121',
            MESSAGE = format('The definition sent is not the one of version %s', p_version_id),
            HINT = 'Roll back with client.definitions.rollback(entity_type, version_id).';
    END IF;
    v_result := charter.publish_org_definition(v_org, p_entity_type, p_definition, p_definition->'baseRef', p_compiled);
    IF v_result->>'status' = 'published' THEN
        UPDATE charter.workflow_versions
           SET commit_message = format('rollback to %s', p_version_id), owner_id = p_actor
         WHERE id = v_result->>'versionId';
        INSERT INTO charter.workflow_version_parents (version_id, parent_version_id, position)
        VALUES (v_result->>'versionId', p_version_id, 1);
    END IF;
    RETURN v_result;
END;
$$;
