-- Published definitions (seed 002): an entity contract with its envelope, and per org a
-- draft / published / archived org definition whose published form is compiled into the
-- effective workflow that is current for (org, entity type).

-- Stores a contract with its envelope (workflow 'envelope:<entity type>') as a new version
-- of the entity type, which becomes the newest; the same contract and envelope as a
-- published version are 'verified' with that version (an org on an older version finds its
-- own). Contracts are the platform's: only the schema's owner publishes a new one, and only
-- when its caller says it may (p_may_publish: the owner's own client, or a platform key over
-- HTTP; an org's key may only find it published) — else PERMISSION_DENIED. A version is
-- published once: a changed contract needs a version higher than the newest. Orgs stay on
-- the version they are pinned to (org_contracts) until they publish a definition on the new
-- one or rebase.
CREATE OR REPLACE FUNCTION charter.publish_contract(
    p_contract jsonb, p_envelope jsonb, p_compiled jsonb, p_may_publish boolean DEFAULT true)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_type    text := p_contract->>'entityType';
    v_slug    text := 'envelope:' || (p_contract->>'entityType');
    v_found   charter.workflow_versions;
    v_newest  charter.workflow_versions;
    v_id      text;
    v_number  integer;
    v_problem text := charter._display_problem(p_contract);
BEGIN
    IF v_type IS NULL OR p_envelope->>'entityType' IS DISTINCT FROM v_type
       OR p_compiled->>'entityType' IS DISTINCT FROM v_type OR p_compiled->>'hash' IS NULL
       OR jsonb_typeof(p_contract->'version') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'Not a contract with its version, envelope and compiled artifact of one entity type',
            HINT = 'Publish with client.definitions.publish(contract) or charter publish CONTRACT.json.';
    END IF;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH151',
            MESSAGE = format('The %s contract''s display is invalid: %s', v_type, v_problem),
            HINT = 'display takes "title" (a template like "Invoice {invoice_no}" of declared fields, {entityType} and {state}), "columns" and "summary" (at most 6): lists of declared fields.';
    END IF;
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    SELECT v.* INTO v_found FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_slug AND v.definition_kind = 'envelope'
       AND (v.contract->>'version')::numeric = (p_contract->>'version')::numeric
     ORDER BY v.version DESC LIMIT 1;
    IF FOUND AND v_found.compiled_hash = p_compiled->>'hash' AND v_found.contract = p_contract THEN
        RETURN jsonb_build_object('status', 'verified', 'versionId', v_found.id,
                                  'version', v_found.version, 'hash', v_found.compiled_hash,
                                  'kind', 'envelope', 'workflowId', v_slug,
                                  'envelopeVersion', v_found.contract->'version');
    END IF;
    IF NOT coalesce(p_may_publish, false)
       OR NOT pg_has_role(session_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace AS n
                                          WHERE n.nspname = 'charter'), 'MEMBER') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH085',
            MESSAGE = format('Publishing the %s contract (version %s) is a platform act: an org may only find a published contract',
                             v_type, p_contract->>'version'),
            HINT = 'Publish contracts as the schema''s owner (charter publish CONTRACT.json) or over HTTP with a platform key (charter keys create --platform).';
    END IF;
    SELECT v.* INTO v_newest FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = v_slug;
    IF FOUND AND (p_contract->>'version')::numeric <= (v_newest.contract->>'version')::numeric THEN
        RAISE EXCEPTION USING ERRCODE = 'CH086',
            MESSAGE = format('Version %s of the %s contract is %s: a changed contract needs a version above %s',
                             p_contract->>'version', v_type,
                             CASE WHEN v_found.id IS NOT NULL THEN 'published with other content' ELSE 'older than the newest' END,
                             v_newest.contract->>'version'),
            HINT = format('Publish it as version %s; orgs move to it when they publish a definition on it or rebase.',
                          (v_newest.contract->>'version')::numeric + 1);
    END IF;
    INSERT INTO charter.workflows (slug, description)
    VALUES (v_slug, format('System envelope of %s', v_type)) ON CONFLICT (slug) DO NOTHING;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
    v_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, dsl, compiled, compiled_hash,
        compiler_version, commit_message, operation, entity_type, contract)
    VALUES (v_id, v_slug, v_number, 'envelope', p_envelope, p_compiled, p_compiled->>'hash',
            p_compiled->>'compilerVersion',
            format('contract %s version %s', v_type, p_contract->>'version'), 'init', v_type, p_contract);
    UPDATE charter.workflows SET current_version_id = v_id, updated_at = now() WHERE slug = v_slug;
    RETURN jsonb_build_object('status', 'published', 'versionId', v_id, 'version', v_number,
                              'hash', p_compiled->>'hash', 'kind', 'envelope', 'workflowId', v_slug,
                              'envelopeVersion', p_contract->'version');
END;
$$;
