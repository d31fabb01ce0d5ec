-- Archives an org definition (a draft or a published patch, with the effective workflows
-- compiled from it) or an effective version of the calling org. When the current effective
-- workflow is archived, the newest other published one becomes current, and the org is on
-- its envelope version; or none, and the bare envelope of the version the org is on applies.
CREATE OR REPLACE FUNCTION charter.archive_definition(p_org_id text, p_version_id text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_version charter.workflow_versions;
    v_current charter.workflow_versions;
BEGIN
    SELECT * INTO v_version FROM charter.workflow_versions AS v
     WHERE v.id = p_version_id AND v.org_id = v_org AND v.definition_kind IN ('org_patch', 'effective');
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH040',
            MESSAGE = format('Version %L is not an org definition of org %L', p_version_id, v_org),
            HINT = 'Archive versions that client.definitions returned for this org.';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', format('effective:%s:%s', v_org, v_version.entity_type)));
    -- Archiving a published org patch archives the effective workflows compiled from it.
    UPDATE charter.workflow_versions SET status = 'archived', updated_at = now()
     WHERE status <> 'archived'
       AND (id = v_version.id OR id IN (SELECT p.version_id FROM charter.workflow_version_parents AS p
                                         WHERE p.parent_version_id = v_version.id));
    UPDATE charter.workflows AS w
       SET current_version_id = (
               SELECT v.id FROM charter.workflow_versions AS v
                WHERE v.workflow_slug = w.slug AND v.status = 'published'
                ORDER BY v.version DESC LIMIT 1),
           updated_at = now()
     WHERE w.slug = format('effective:%s:%s', v_org, v_version.entity_type)
       AND w.current_version_id IN (SELECT v.id FROM charter.workflow_versions AS v WHERE v.status = 'archived');
    IF FOUND THEN
        SELECT v.* INTO v_current FROM charter.workflows AS w
          JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
         WHERE w.slug = format('effective:%s:%s', v_org, v_version.entity_type);
        IF FOUND THEN
            PERFORM charter._move_org_contract(v_org, v_version.entity_type,
                (charter._envelope_version(v_version.entity_type, (v_current.base_ref->>'envelopeVersion')::numeric)).id);
        END IF;
    END IF;
    RETURN jsonb_build_object('status', 'archived', 'versionId', v_version.id,
                              'version', v_version.version, 'hash', v_version.compiled_hash,
                              'kind', v_version.definition_kind);
END;
$$;
