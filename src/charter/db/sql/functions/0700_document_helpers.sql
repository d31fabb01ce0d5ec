-- Helpers of the documents kernel; mutate() and its siblings call them under their locks.

-- The org a call acts for, refused with the reason: an org id that is not 1 to 200
-- characters, or one other than the transaction's charter.org_id when that is set (a caller
-- that set it for row-level security cannot act for another org). _acting_org calls it only
-- when its own test fails.
CREATE OR REPLACE FUNCTION charter._check_acting_org(p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_session text := nullif(current_setting('charter.org_id', true), '');
BEGIN
    PERFORM charter._check_org_id(p_org_id);
    IF v_session IS NOT NULL AND v_session <> p_org_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH038',
            MESSAGE = format('This transaction is scoped to org %L, not %L', v_session, p_org_id),
            HINT = 'Use one org per transaction: the client''s org_id must match charter.org_id.';
    END IF;
    RETURN p_org_id;
END;
$$;

-- The org a call acts for (_check_acting_org's rules). A SQL-standard body without a SET
-- clause: PostgreSQL inlines it where it is called, and the helper that says what is wrong
-- runs only for an org it refuses.
CREATE OR REPLACE FUNCTION charter._acting_org(p_org_id text)
RETURNS text
LANGUAGE sql
STABLE
RETURN CASE WHEN length(p_org_id) BETWEEN 1 AND 200
             AND coalesce(nullif(current_setting('charter.org_id', true), '') = p_org_id, true)
            THEN p_org_id
            ELSE charter._check_acting_org(p_org_id) END;

-- Whether the session is the engine: the schema's owner or a member of charter_worker.
-- Only the engine may act as the reserved actors or record a change as the workflow's.
CREATE OR REPLACE FUNCTION charter._is_engine()
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT pg_has_role(session_user, n.nspowner, 'MEMBER')
                   OR pg_has_role(session_user, 'charter_worker', 'MEMBER')
              FROM pg_catalog.pg_namespace AS n
             WHERE n.nspname = 'charter');
END;
$$;

-- An actor outside the org's directory: for the engine only, the reserved system and
-- service:NAME actors (no roles); anyone else is refused, saying why.
CREATE OR REPLACE FUNCTION charter._reserved_actor(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_actor = 'system' OR p_actor LIKE 'service:_%' THEN
        IF NOT charter._is_engine() THEN
            RAISE EXCEPTION USING ERRCODE = 'CH036',
                MESSAGE = format('Actor %L is reserved for the engine, and %s is not the engine', p_actor, session_user),
                HINT = 'Act as a user of the org''s directory; system and service:NAME are for charter''s worker and the schema''s owner.';
        END IF;
        RETURN jsonb_build_object('id', p_actor, 'roles', '[]'::jsonb, 'reserved', true);
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH036',
        MESSAGE = format('Actor %L is not in the directory of org %L', p_actor, p_org_id),
        HINT = 'Add the user first (client.directory.put_user), or act as system or service:NAME for the engine''s own work.';
END;
$$;

-- A user of the directory as expressions see an actor ({"id", "roles", "manager", "email",
-- "phone"}). A SQL-standard body without a SET clause: PostgreSQL inlines it where it is
-- called, so mutate() reads the actor in the statement that reads the document.
CREATE OR REPLACE FUNCTION charter._actor_json(p_user charter.directory_users)
RETURNS jsonb
LANGUAGE sql
STABLE
RETURN jsonb_build_object('id', p_user.user_id, 'roles', to_jsonb(p_user.roles), 'manager', p_user.manager_id,
                          'email', p_user.email, 'phone', p_user.phone, 'reserved', false);

-- An actor as expressions see it: a user of the org's directory (which never holds the
-- reserved names, user_id_is_not_reserved), else _reserved_actor's.
CREATE OR REPLACE FUNCTION charter._directory_actor(p_org_id text, p_actor text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_actor jsonb;
BEGIN
    SELECT charter._actor_json(u) INTO v_actor FROM charter.directory_users AS u
     WHERE u.org_id = p_org_id AND u.user_id = p_actor;
    RETURN coalesce(v_actor, charter._reserved_actor(p_org_id, p_actor));
END;
$$;

-- The contract a document follows (its envelope version's), or ENTITY_TYPE_UNKNOWN.
CREATE OR REPLACE FUNCTION charter._current_contract(p_entity_type text)
RETURNS charter.workflow_versions
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_version charter.workflow_versions;
BEGIN
    SELECT v.* INTO v_version
      FROM charter.workflows AS w
      JOIN charter.workflow_versions AS v ON v.id = w.current_version_id
     WHERE w.slug = 'envelope:' || p_entity_type AND v.contract IS NOT NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH037',
            MESSAGE = format('No contract is published for entity type %L', p_entity_type),
            HINT = 'Publish its entity contract first: charter publish CONTRACT.json (or client.definitions.publish).';
    END IF;
    RETURN v_version;
END;
$$;

-- Whether a policy surely lets the actor act without _check_policy: no policy, a reserved
-- actor, or a policy of roles alone (no rule) one of which the actor has. A SQL-standard
-- body without a SET clause: PostgreSQL inlines it, so mutate() calls _check_policy only for
-- a rule or a refusal, which _check_policy decides and explains. STABLE, as
-- jsonb_build_object is: PostgreSQL does not inline an IMMUTABLE function that calls one.
CREATE OR REPLACE FUNCTION charter._policy_passes(p_policy jsonb, p_actor jsonb)
RETURNS boolean
LANGUAGE sql
STABLE
RETURN p_policy IS NULL
    OR coalesce((p_actor->>'reserved')::boolean, false)
    OR (NOT p_policy ? 'rule'
        AND (NOT p_policy ? 'roles'
             OR (jsonb_typeof(p_policy->'roles') = 'array'
                 -- Strict, errors silent (NULL, so coalesced): a role that is not a string
                 -- matches nothing here.
                 AND coalesce(jsonb_path_exists(p_actor, 'strict $.roles[*] ? (@ == $roles[*])',
                                                jsonb_build_object('roles', p_policy->'roles'), true),
                              false))));

-- Refuses an actor the contract's policy for p_key does not allow. The policy is p_key's,
-- else the contract's "*" default. Closed by default: with neither, a gate or a declared
-- action is refused to everyone (CONTRACT_POLICY_MISSING: publish requires one, so only a
-- contract stored before that rule lacks it), while create, update and amend stay open to
-- any actor of the org. The reserved actors act for the engine and pass.
CREATE OR REPLACE FUNCTION charter._check_policy(
    p_contract jsonb, p_key text, p_actor jsonb, p_entity jsonb, p_org_data jsonb, p_context jsonb)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_policy jsonb := coalesce(p_contract #> ARRAY['policies', p_key], p_contract #> '{policies,*}');
    v_result jsonb;
BEGIN
    IF (p_actor->>'reserved')::boolean THEN
        RETURN;
    END IF;
    IF v_policy IS NULL THEN
        IF p_contract->'transitions' @> jsonb_build_array(jsonb_build_object('gate', p_key))
           OR p_contract->'actions' @> jsonb_build_array(jsonb_build_object('actionType', p_key)) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH090',
                MESSAGE = format('Actor %L may not %s: the %s contract states no policy for %s %L and no "*" default, and what no policy grants is refused',
                                 p_actor->>'id', p_key, p_contract->>'entityType',
                                 CASE WHEN p_contract->'transitions' @> jsonb_build_array(jsonb_build_object('gate', p_key))
                                      THEN 'gate' ELSE 'action' END, p_key),
                HINT = format('Publish the contract again with a policy for %s (e.g. "%s": {"roles": ["clerk"]}) or a "*" default: charter publish CONTRACT.json.',
                              p_key, p_key);
        END IF;
        RETURN;
    END IF;
    IF v_policy ? 'roles' THEN
        IF NOT (p_actor->'roles' ?| ARRAY(SELECT jsonb_array_elements_text(v_policy->'roles'))) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH033',
                MESSAGE = format('Actor %L may not %s: the policy asks for one of the roles %s, and the actor has %s',
                                 p_actor->>'id', p_key, v_policy->'roles', p_actor->'roles'),
                HINT = 'Give the user one of those roles in the directory, or act as a user who has one.';
        END IF;
    END IF;
    IF v_policy ? 'rule' THEN
        v_result := charter.eval_expr(v_policy->'compiled',
            jsonb_build_object('entity', p_entity, 'actor', p_actor, 'org', p_org_data, 'context', p_context));
        IF v_result->'result' IS DISTINCT FROM 'true'::jsonb THEN
            RAISE EXCEPTION USING ERRCODE = 'CH033',
                MESSAGE = format('Actor %L may not %s: the policy rule %s is %s for %s',
                                 p_actor->>'id', p_key, v_policy->>'rule', v_result->'result',
                                 v_result->'variables'),
                HINT = 'The rule is part of the published contract; act as someone it allows.';
        END IF;
    END IF;
END;
$$;

-- Refuses changes to undeclared fields (when the contract declares fields), values of the
-- wrong type, and, for an action, fields the action may not set. Returns the changes.
CREATE OR REPLACE FUNCTION charter._checked_changes(
    p_contract jsonb, p_changes jsonb, p_allowed jsonb, p_what text)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_field record;
    v_type  text;
BEGIN
    IF jsonb_typeof(coalesce(p_changes, '{}'::jsonb)) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH032',
            MESSAGE = format('The changes of %s must be a JSON object of fields, not %s', p_what, jsonb_typeof(p_changes)),
            HINT = 'Pass {"field": value, ...}.';
    END IF;
    FOR v_field IN SELECT e.key, e.value FROM jsonb_each(coalesce(p_changes, '{}'::jsonb)) AS e LOOP
        IF p_allowed IS NOT NULL AND NOT p_allowed ? v_field.key THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L cannot be set by %s, which may set only %s', v_field.key, p_what, p_allowed),
                HINT = 'Set it with an update, or declare it among the action''s fields in the contract.';
        END IF;
        CONTINUE WHEN p_contract->'fields' IS NULL;
        v_type := p_contract #>> ARRAY['fields', v_field.key];
        IF v_type IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L is not declared by the %s contract', v_field.key, p_contract->>'entityType'),
                HINT = format('The declared fields are %s; declare new ones in the contract and publish it.',
                              (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(p_contract->'fields') AS k));
        END IF;
        IF v_type <> 'any' AND jsonb_typeof(v_field.value) <> 'null' AND jsonb_typeof(v_field.value) <> v_type THEN
            RAISE EXCEPTION USING ERRCODE = 'CH032',
                MESSAGE = format('Field %L must be a %s, not the %s %s', v_field.key, v_type,
                                 jsonb_typeof(v_field.value), left(v_field.value::text, 80)),
                HINT = 'Send a value of the declared type (null clears a field).';
        END IF;
    END LOOP;
    RETURN coalesce(p_changes, '{}'::jsonb);
END;
$$;

-- Whether _checked_changes refuses one field of the changes: not among p_allowed (an
-- action's fields, when given), not declared by the contract's p_fields (when it declares
-- fields), or a value of another type than declared (null clears any field). A SQL-standard
-- body without a SET clause: PostgreSQL inlines it, so mutate() checks a patch in the pass
-- that computes its changes and calls _checked_changes only to say what is wrong.
CREATE OR REPLACE FUNCTION charter._field_refused(p_fields jsonb, p_allowed jsonb, p_key text, p_value jsonb)
RETURNS boolean
LANGUAGE sql
IMMUTABLE
RETURN (p_allowed IS NOT NULL AND NOT p_allowed ? p_key)
    OR (p_fields IS NOT NULL
        AND (p_fields->>p_key IS NULL
             OR (p_fields->>p_key <> 'any' AND jsonb_typeof(p_value) <> 'null'
                 AND jsonb_typeof(p_value) <> p_fields->>p_key)));

-- The changes as {field: {"from": old, "to": new}}, for versions and the audit trail.
CREATE OR REPLACE FUNCTION charter._field_changes(p_old jsonb, p_new jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_object_agg(k, jsonb_build_object('from', p_old->k, 'to', p_new->k)), '{}'::jsonb)
              FROM (SELECT jsonb_object_keys(coalesce(p_old, '{}'::jsonb) || coalesce(p_new, '{}'::jsonb)) AS k) AS keys
             WHERE (p_old->k) IS DISTINCT FROM (p_new->k));
END;
$$;

-- The key of a document's event (WF-11): the document, the event type and the version.
-- A SQL-standard body without a SET clause, STABLE (as convert_to is): PostgreSQL inlines
-- it where it is called.
CREATE OR REPLACE FUNCTION charter._event_key(p_document_id text, p_event_type text, p_version integer)
RETURNS text
LANGUAGE sql
STABLE
RETURN encode(sha256(convert_to(p_document_id || '|' || p_event_type || '|' || p_version, 'UTF8')), 'hex');

-- Writes one event to the outbox unless an event with its key was ever written (WF-11):
-- the receipt is the dedup gate. mutate() writes its own event and receipt in the
-- statement that records its change (its key is always new).
CREATE OR REPLACE FUNCTION charter._emit_event(
    p_org_id text, p_document_id text, p_entity_type text, p_version integer,
    p_event_type text, p_payload jsonb, p_trace_id text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_key text := charter._event_key(p_document_id, p_event_type, p_version);
BEGIN
    INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
    VALUES (p_org_id, 'events', v_key) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO charter.document_events (
        org_id, document_id, entity_type, entity_version, event_type, payload,
        idempotency_key, trace_id)
    VALUES (p_org_id, p_document_id, p_entity_type, p_version, p_event_type, p_payload,
            v_key, p_trace_id);
    PERFORM charter._wake_engine(p_org_id);
    RETURN true;
END;
$$;

-- Whether no documents engine sleeps, taking the 'engine' lock shared until the transaction
-- ends when none does (_wake_engine). A SQL-standard body without a SET clause: PostgreSQL
-- inlines it where it is called, so mutate() decides in an IF whether to wake anyone.
CREATE OR REPLACE FUNCTION charter._no_engine_asleep()
RETURNS boolean
LANGUAGE sql
VOLATILE
RETURN pg_try_advisory_xact_lock_shared(charter._lock_key('engine', 'asleep'));

-- Wakes the documents engine at commit (NOTIFY charter_events) only when an engine sleeps:
-- PostgreSQL commits notifying transactions one at a time (each holds the notify queue's
-- lock until its commit is flushed), so a NOTIFY per mutation would make concurrent
-- mutations wait for each other's fsync. An engine about to sleep holds the 'engine' lock
-- exclusively (charter.engine_sleeps) and looks once more before it sleeps; a transaction
-- that can take the lock shared (_no_engine_asleep) instead commits while no engine sleeps,
-- and holds the lock until it ends, so no engine can start sleeping before that look sees
-- its events.
CREATE OR REPLACE FUNCTION charter._wake_engine(p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF NOT charter._no_engine_asleep() THEN
        PERFORM pg_notify('charter_events', p_org_id);
    END IF;
END;
$$;

-- A document as the API returns it.
-- A SQL-standard body without a SET clause, STABLE (as jsonb_build_object of a timestamp
-- is): PostgreSQL inlines it where it is called.
CREATE OR REPLACE FUNCTION charter._document_json(p_document charter.documents)
RETURNS jsonb
LANGUAGE sql
STABLE
RETURN jsonb_build_object(
    'id', p_document.id, 'entityType', p_document.entity_type, 'orgId', p_document.org_id,
    'version', p_document.version, 'state', p_document.state, 'data', p_document.data,
    'amendedFrom', p_document.amended_from, 'amendedBy', p_document.amended_by,
    'contractVersionId', p_document.contract_version_id,
    'createdAt', p_document.created_at, 'updatedAt', p_document.updated_at);
