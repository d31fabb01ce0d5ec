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
BEGIN
    IF v_type IS NULL OR p_envelope->>'entityType' IS DISTINCT FROM v_type
       OR p_compiled->>'entityType' IS DISTINCT FROM v_type OR p_compiled->>'hash' IS NULL
       OR jsonb_typeof(p_contract->'version') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = 'Not a contract with its version, envelope and compiled artifact of one entity type',
            HINT = 'Publish with client.definitions.publish(contract) or charter publish CONTRACT.json.';
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

-- Saves an org definition as the org's draft for its entity type (one draft at a time:
-- saving again edits it). Returns {"status": "draft", "versionId", "version"}.
CREATE OR REPLACE FUNCTION charter.save_org_draft(
    p_org_id text, p_entity_type text, p_definition jsonb, p_base_ref jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_slug   text := format('org:%s:%s', v_org, p_entity_type);
    v_draft  charter.workflow_versions;
    v_number integer;
BEGIN
    PERFORM charter._current_contract(p_entity_type);  -- the entity type must be published
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    INSERT INTO charter.workflows (slug, org_id, description)
    VALUES (v_slug, v_org, format('Org definitions of %s for %s', p_entity_type, v_org))
    ON CONFLICT (slug) DO NOTHING;
    SELECT * INTO v_draft FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_slug AND v.status = 'draft';
    IF FOUND THEN
        UPDATE charter.workflow_versions SET dsl = p_definition, base_ref = p_base_ref, updated_at = now()
         WHERE id = v_draft.id RETURNING * INTO v_draft;
    ELSE
        SELECT coalesce(max(v.version), 0) + 1 INTO v_number
          FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
        INSERT INTO charter.workflow_versions (
            id, workflow_slug, version, definition_kind, dsl, base_ref, status, org_id, entity_type,
            commit_message, operation)
        VALUES ('wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12), v_slug, v_number,
                'org_patch', p_definition, p_base_ref, 'draft', v_org, p_entity_type, 'draft', 'init')
        RETURNING * INTO v_draft;
    END IF;
    RETURN jsonb_build_object('status', 'draft', 'versionId', v_draft.id, 'version', v_draft.version,
                              'kind', 'org_patch');
END;
$$;

-- Publishes an org definition compiled against the envelope version its baseRef names (any
-- published version of the contract): the org patch is frozen (the draft with the same
-- definition is promoted), the effective workflow becomes current for (org, entity type),
-- and the org is on that envelope version from then on (new documents validate against its
-- contract). The same effective workflow again is 'verified'. Instances already running
-- stay on their version, documents on their contract.
CREATE OR REPLACE FUNCTION charter.publish_org_definition(
    p_org_id text, p_entity_type text, p_definition jsonb, p_base_ref jsonb, p_compiled jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_patches  text := format('org:%s:%s', v_org, p_entity_type);
    v_slug     text := format('effective:%s:%s', v_org, p_entity_type);
    v_current  charter.workflow_versions;
    v_envelope charter.workflow_versions;
    v_patch_id text;
    v_id       text;
    v_number   integer;
BEGIN
    PERFORM charter._current_contract(p_entity_type);  -- the entity type must be published
    IF p_compiled->>'hash' IS NULL OR p_compiled->>'entityType' IS DISTINCT FROM p_entity_type THEN
        RAISE EXCEPTION USING ERRCODE = 'CH020',
            MESSAGE = format('Not a compiled effective workflow of %L', p_entity_type),
            HINT = 'Publish with client.definitions.publish(contract, org_definition).';
    END IF;
    IF jsonb_typeof(p_base_ref->'envelopeVersion') IS DISTINCT FROM 'number' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The org definition names no envelope version of %L (baseRef.envelopeVersion)', p_entity_type),
            HINT = 'Set baseRef.envelopeVersion to a published contract''s version and compile again.';
    END IF;
    v_envelope := charter._envelope_version(p_entity_type, (p_base_ref->>'envelopeVersion')::numeric);
    IF p_compiled->'envelopeVersion' IS DISTINCT FROM v_envelope.contract->'version' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The org definition is for envelope version %s of %L, but its compiled workflow is for version %s',
                             p_base_ref->>'envelopeVersion', p_entity_type, coalesce(p_compiled->>'envelopeVersion', 'none')),
            HINT = 'Compile the org definition against the envelope its baseRef names (client.definitions.publish does).';
    END IF;
    -- What the compiler would refuse is refused here too, whoever calls (WF-06, WF-07,
    -- WF-08, edit windows never looser, expressions): see charter._verify_effective.
    PERFORM charter._verify_effective(p_compiled, v_envelope);
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_patches));
    PERFORM pg_advisory_xact_lock(charter._lock_key('flow', v_slug));
    SELECT v.* INTO v_current FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = v_slug;
    IF FOUND AND v_current.compiled_hash = p_compiled->>'hash' THEN
        PERFORM charter._move_org_contract(v_org, p_entity_type, v_envelope.id);
        RETURN jsonb_build_object('status', 'verified', 'versionId', v_current.id,
                                  'version', v_current.version, 'hash', v_current.compiled_hash,
                                  'kind', 'effective', 'envelopeVersion', v_envelope.contract->'version');
    END IF;
    INSERT INTO charter.workflows (slug, org_id, description)
    VALUES (v_patches, v_org, format('Org definitions of %s for %s', p_entity_type, v_org)),
           (v_slug, v_org, format('Effective workflow of %s for %s', p_entity_type, v_org))
    ON CONFLICT (slug) DO NOTHING;
    SELECT v.id INTO v_patch_id FROM charter.workflow_versions AS v
     WHERE v.workflow_slug = v_patches AND v.status = 'draft' AND v.dsl = p_definition;
    IF FOUND THEN
        UPDATE charter.workflow_versions SET status = 'published', base_ref = p_base_ref, updated_at = now()
         WHERE id = v_patch_id;
    ELSE
        SELECT coalesce(max(v.version), 0) + 1 INTO v_number
          FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_patches;
        v_patch_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
        INSERT INTO charter.workflow_versions (
            id, workflow_slug, version, definition_kind, dsl, base_ref, status, org_id, entity_type,
            commit_message, operation)
        VALUES (v_patch_id, v_patches, v_number, 'org_patch', p_definition, p_base_ref, 'published',
                v_org, p_entity_type, 'published', 'init');
    END IF;
    SELECT coalesce(max(v.version), 0) + 1 INTO v_number
      FROM charter.workflow_versions AS v WHERE v.workflow_slug = v_slug;
    v_id := 'wf_ver_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    INSERT INTO charter.workflow_versions (
        id, workflow_slug, version, definition_kind, dsl, base_ref, compiled, compiled_hash,
        compiler_version, status, org_id, entity_type, commit_message, operation)
    VALUES (v_id, v_slug, v_number, 'effective', p_definition, p_base_ref, p_compiled,
            p_compiled->>'hash', p_compiled->>'compilerVersion', 'published', v_org, p_entity_type,
            format('compiled from org definition %s', v_patch_id), 'init');
    INSERT INTO charter.workflow_version_parents (version_id, parent_version_id, position)
    VALUES (v_id, v_patch_id, 0);
    UPDATE charter.workflows SET current_version_id = v_id, updated_at = now() WHERE slug = v_slug;
    PERFORM charter._move_org_contract(v_org, p_entity_type, v_envelope.id);
    RETURN jsonb_build_object('status', 'published', 'versionId', v_id, 'version', v_number,
                              'hash', p_compiled->>'hash', 'kind', 'effective',
                              'orgPatchVersionId', v_patch_id, 'envelopeVersion', v_envelope.contract->'version');
END;
$$;

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

-- The workflow documents of an entity type follow in the calling org: the org's current
-- effective workflow, else the bare envelope of the version the org is on (for an org that
-- has not used the type yet, the newest). Says which envelope version the org is on
-- (envelopeVersion) and which is the newest published (latestEnvelopeVersion).
CREATE OR REPLACE FUNCTION charter.current_definition(p_org_id text, p_entity_type text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_version  charter.workflow_versions;
    v_envelope charter.workflow_versions;
BEGIN
    -- An entity type is a plain name: 'eu:ap_invoice' must not reach another org's slug.
    IF p_entity_type IS NULL OR p_entity_type !~ '^[a-z][a-z0-9_]*$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022',
            MESSAGE = format('%L is not an entity type', p_entity_type),
            HINT = 'Entity types are lower-case names of letters, digits and _ (e.g. ap_invoice).';
    END IF;
    v_envelope := charter._org_contract(v_org, p_entity_type);
    SELECT v.* INTO v_version FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = format('effective:%s:%s', v_org, p_entity_type);
    IF NOT FOUND THEN
        v_version := v_envelope;
    END IF;
    RETURN jsonb_build_object('status', v_version.status, 'versionId', v_version.id,
                              'version', v_version.version, 'hash', v_version.compiled_hash,
                              'kind', v_version.definition_kind, 'compiled', v_version.compiled,
                              'envelopeVersion', v_envelope.contract->'version',
                              'envelopeVersionId', v_envelope.id,
                              'latestEnvelopeVersion', (charter._current_contract(p_entity_type)).contract->'version');
END;
$$;
