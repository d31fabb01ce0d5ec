-- Rebases the calling org onto envelope version p_envelope_version of an entity type: with
-- the org's definition recompiled on it (p_definition, p_compiled: the client's compilation,
-- checked as publish_org_definition checks any), a new effective workflow becomes current;
-- with none (the org runs the bare envelope), the org is simply moved to that version. New
-- documents then validate against that version's contract; running instances and existing
-- documents stay on theirs. p_from_version_id is the effective workflow the client rebased
-- (NULL: none); if the org published or archived one since, DEFINITION_CHANGED (rebase
-- again), and nothing changes. Returns the definition the org now follows, as
-- current_definition does, with status 'rebased' (or 'verified' when nothing moved).
CREATE OR REPLACE FUNCTION charter.rebase_definition(
    p_org_id text, p_entity_type text, p_from_version_id text, p_envelope_version numeric,
    p_definition jsonb DEFAULT NULL, p_compiled jsonb DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_slug     text := format('effective:%s:%s', charter._acting_org(p_org_id), p_entity_type);
    v_before   jsonb;
    v_current  text;
    v_envelope charter.workflow_versions;
    v_now      jsonb;
BEGIN
    v_before := charter.current_definition(v_org, p_entity_type);  -- checks the entity type
    v_envelope := charter._envelope_version(p_entity_type, p_envelope_version);
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', format('org:%s:%s', v_org, p_entity_type)));
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    SELECT w.current_version_id INTO v_current FROM charter.workflows AS w WHERE w.slug = v_slug;
    IF v_current IS DISTINCT FROM p_from_version_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH087',
            MESSAGE = format('The %s definition of org %s changed while it was rebased (now %s)',
                             p_entity_type, v_org, coalesce(v_current, 'the bare envelope')),
            HINT = 'Rebase again: client.definitions.rebase(entity_type) starts from the current definition.';
    END IF;
    IF (p_definition IS NULL) <> (v_current IS NULL) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = CASE WHEN v_current IS NULL
                           THEN format('Org %s runs the bare %s envelope: a rebase has no definition to publish', v_org, p_entity_type)
                           ELSE format('Org %s has an effective %s workflow: a rebase recompiles its definition', v_org, p_entity_type) END,
            HINT = 'Rebase with client.definitions.rebase(entity_type).';
    END IF;
    IF p_definition IS NOT NULL THEN
        PERFORM charter.publish_org_definition(v_org, p_entity_type, p_definition, p_definition->'baseRef', p_compiled);
    ELSE
        PERFORM charter._move_org_contract(v_org, p_entity_type, v_envelope.id);
    END IF;
    v_now := charter.current_definition(v_org, p_entity_type);
    RETURN v_now || jsonb_build_object('status',
        CASE WHEN v_now->'versionId' = v_before->'versionId' AND v_now->'envelopeVersion' = v_before->'envelopeVersion'
             THEN 'verified' ELSE 'rebased' END);
END;
$$;
