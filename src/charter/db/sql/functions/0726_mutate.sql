-- The one write path of business documents (seed 002 K-01). In one transaction: lock the
-- document; check the actor against the contract's policy; refuse a document that was
-- amended (DOCUMENT_AMENDED, naming the amendment); check the edit window of an
-- update (locked refuses, amend_only writes and forces an amendment event; a declared action
-- is not an edit and may set only its own fields); check expected_version; validate the
-- fields and the data's size; for a gate, check the transition is legal (and that the
-- instance is not paused: WORKFLOW_PAUSED); write the new version (snapshot + changes), one
-- audit row, and the trigger events in the outbox.
--   p_action: 'create' (p_document_id optional, p_entity_type required), 'update', a gate
--   name of the contract (p_to picks the target state when the gate has several), or an
--   action type the contract declares (it may set only its fields).
--   p_via / p_node_id: how the change came (api; workflow at a node; system). Only the
--   engine (the schema owner or a charter_worker member) may act as system or service:NAME
--   or say it is the workflow; any other caller is recorded as the api.
-- Returns the document as it is now. Nothing is written when any check fails.
-- A hot path (docs/architecture.md, mutate): each statement and each helper call costs a
-- plan's start-up, so what only some calls need (the engine check, the org's data, a
-- policy, a gate's pending body) is read only by those, and the contract is looked up with
-- jsonb operators rather than queries.
CREATE OR REPLACE FUNCTION charter.mutate(
    p_org_id text,
    p_action text,
    p_document_id text,
    p_changes jsonb,
    p_actor text,
    p_entity_type text DEFAULT NULL,
    p_expected_version integer DEFAULT NULL,
    p_reason text DEFAULT NULL,
    p_trace_id text DEFAULT NULL,
    p_to text DEFAULT NULL,
    p_via text DEFAULT 'api',
    p_node_id text DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_org       text := charter._acting_org(p_org_id);
    v_trace     text := coalesce(nullif(p_trace_id, ''), replace(gen_random_uuid()::text, '-', ''));
    v_via       text;
    v_actor     jsonb;
    v_version   charter.workflow_versions;
    v_contract  jsonb;
    v_found     record;
    v_instance  record;
    v_doc       charter.documents;
    v_new       charter.documents;
    v_changes   jsonb;
    v_window    text;
    v_kind      text;
    v_targets   jsonb;
    v_target    jsonb;
    v_event     text;
    v_payload   jsonb := '{}'::jsonb;
    v_key       text;
    v_allowed   jsonb;
    v_refused   boolean;
    v_policy    jsonb;
BEGIN
    IF p_actor IS NULL OR length(p_actor) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = 'Every mutation needs an actor (a user id of the directory)',
            HINT = 'Pass actor=.';
    END IF;
    -- Only a caller that claims to be the workflow or the system is asked whether it is the engine.
    v_via := CASE WHEN p_via IN ('workflow', 'system') THEN
                 CASE WHEN charter._is_engine() THEN p_via ELSE 'api' END
             ELSE 'api' END;

    IF p_action = 'create' THEN
        v_actor := charter._directory_actor(v_org, p_actor);
        v_version := charter._pin_contract(v_org, p_entity_type);  -- the contract the org is on
        v_contract := v_version.contract || '{}'::jsonb;  -- decompressed once, as below
        v_new.id := coalesce(p_document_id, gen_random_uuid()::text);
        v_new.org_id := v_org;
        v_new.entity_type := p_entity_type;
        v_new.contract_version_id := v_version.id;
        v_new.version := 1;
        v_new.state := v_contract #>> '{states,0,id}';
        v_policy := coalesce(v_contract #> '{policies,create}', v_contract #> '{policies,*}');
        IF v_policy IS NOT NULL THEN
            IF NOT charter._policy_passes(v_policy, v_actor) THEN
                PERFORM charter._check_policy(v_contract, 'create', v_actor,
                    CASE WHEN jsonb_typeof(p_changes) = 'object' THEN p_changes ELSE '{}'::jsonb END,
                    coalesce((SELECT o.data FROM charter.directory_orgs AS o WHERE o.org_id = v_org), '{}'::jsonb),
                    jsonb_build_object('action', 'create', 'state', v_new.state, 'version', 1));
            END IF;
        END IF;
        v_new.data := charter._checked_changes(v_contract, p_changes, NULL, 'create');
        v_changes := charter._field_changes('{}'::jsonb, v_new.data);
        v_event := 'on_create';
    ELSE
        -- In one read: the document, locked; the contract it follows; and the actor (who,
        -- refused, waits for the lock like anyone). The contract comes out decompressed
        -- (|| '{}' returns it whole): PL/pgSQL keeps a compressed value as it is, and each
        -- operator on it would decompress it again. The document's instance is read in a
        -- statement of its own, after the lock (below).
        SELECT d AS doc, v.contract || '{}'::jsonb AS contract,
               CASE WHEN u.user_id IS NOT NULL THEN charter._actor_json(ROW(u.*)::charter.directory_users) END AS actor
          INTO v_found
          FROM charter.documents AS d
          JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
          LEFT JOIN charter.directory_users AS u ON u.org_id = v_org AND u.user_id = p_actor
         WHERE d.org_id = v_org AND d.id = p_document_id
           FOR UPDATE OF d;
        IF NOT FOUND THEN
            PERFORM charter._directory_actor(v_org, p_actor);  -- an unknown actor is told that first
            RAISE EXCEPTION USING ERRCODE = 'CH030',
                MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
                HINT = 'Check the document id and the client''s org.';
        END IF;
        v_actor := coalesce(v_found.actor, charter._reserved_actor(v_org, p_actor));
        v_doc := v_found.doc;
        v_contract := v_found.contract;
        v_kind := CASE
            WHEN p_action = 'update' THEN 'update'
            WHEN v_contract->'transitions' @> jsonb_build_array(jsonb_build_object('gate', p_action)) THEN 'gate'
            WHEN v_contract->'actions' @> jsonb_build_array(jsonb_build_object('actionType', p_action)) THEN 'action'
            -- A workflow's Python action (@charter.action): the engine applies its field patch.
            WHEN v_via = 'workflow' AND p_action ~ '^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$' THEN 'handler_action'
        END;
        -- Who may do this comes first: a refused actor learns nothing more of the document.
        -- A policy of roles the actor has needs no call; _check_policy decides the rest. The
        -- action's policy, else the "*" default (which a workflow's Python action, never in
        -- the contract, does not take); with neither, a gate or a declared action is closed.
        v_policy := coalesce(v_contract #> ARRAY['policies', p_action],
                             CASE WHEN v_kind IS DISTINCT FROM 'handler_action' THEN v_contract #> '{policies,*}' END);
        IF v_policy IS NOT NULL THEN
            IF NOT charter._policy_passes(v_policy, v_actor) THEN
                PERFORM charter._check_policy(v_contract, p_action, v_actor,
                    v_doc.data || CASE WHEN jsonb_typeof(p_changes) = 'object' THEN p_changes ELSE '{}'::jsonb END,
                    coalesce((SELECT o.data FROM charter.directory_orgs AS o WHERE o.org_id = v_org), '{}'::jsonb),
                    jsonb_build_object('action', p_action, 'state', v_doc.state, 'version', v_doc.version));
            END IF;
        ELSIF v_kind IN ('gate', 'action') AND NOT coalesce((v_actor->>'reserved')::boolean, false) THEN
            PERFORM charter._check_policy(v_contract, p_action, v_actor, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb);
        END IF;
        -- An amended document is superseded by its amendment: nothing changes it any more.
        -- Read from the locked row, so a change that waited for an amendment's lock sees it.
        IF v_doc.amended_by IS NOT NULL THEN
            PERFORM charter._document_amended(v_doc);
        END IF;
        IF v_kind IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH035',
                MESSAGE = format('%L is neither update, a gate nor an action of the %s contract', p_action, v_doc.entity_type),
                HINT = format('Gates: %s; actions: %s.',
                    (SELECT string_agg(DISTINCT t->>'gate', ', ') FROM jsonb_array_elements(v_contract->'transitions') AS t),
                    coalesce((SELECT string_agg(a->>'actionType', ', ') FROM jsonb_array_elements(v_contract->'actions') AS a), 'none'));
        END IF;
        IF v_kind = 'update' THEN
            -- The engine changes a document's instance only under the document's lock, so the
            -- instance is read in a statement after the lock: it sees what the engine committed
            -- while this call waited (a read in the locking statement would not).
            SELECT i.current_nodes AS nodes, v.compiled->'editWindows' AS windows, i.document_version AS seen
              INTO v_instance
              FROM charter.workflow_instances AS i
              JOIN charter.workflow_versions AS v ON v.id = i.version_id
             WHERE i.org_id = v_org AND i.document_id = v_doc.id AND i.status IN ('running', 'paused');
            -- Apart: PL/pgSQL prepares an expression in each transaction that reaches it.
            IF v_instance.windows IS NOT NULL THEN
                v_window := charter._nodes_window(v_instance.nodes, v_instance.windows);
                -- An instance that has not seen the last change may rest in the state the
                -- document left: the state's window holds too (_edit_window says why).
                IF v_window IS NOT NULL AND v_instance.seen < v_doc.version THEN
                    v_window := charter._edit_window(v_contract, v_doc);
                END IF;
            END IF;
            v_window := coalesce(v_window, charter._state_window(v_contract, v_doc.state));
            IF v_window = 'locked' THEN
                RAISE EXCEPTION USING ERRCODE = 'CH034',
                    MESSAGE = format('Document %L is locked (state %L%s): it cannot be edited', v_doc.id, v_doc.state,
                        coalesce(' at workflow node ' || (SELECT string_agg(n, ', ') FROM charter.workflow_instances AS i,
                            unnest(i.current_nodes) AS n WHERE i.org_id = v_org AND i.document_id = v_doc.id
                            AND i.status IN ('running', 'paused')), '')),
                    HINT = 'Amend it instead (documents.amend creates a new document that goes through the lifecycle again).';
            END IF;
        END IF;
        IF p_expected_version IS NOT NULL AND p_expected_version <> v_doc.version THEN
            RAISE EXCEPTION USING ERRCODE = 'CH031',
                MESSAGE = format('Document %L is at version %s, not %s: someone changed it meanwhile',
                                 v_doc.id, v_doc.version, p_expected_version),
                HINT = 'Read it again (documents.get) and apply your change to the current version.';
        END IF;
        v_new := v_doc;
        v_new.version := v_doc.version + 1;

        IF v_kind = 'gate' THEN
            IF p_changes IS NOT NULL AND p_changes <> '{}'::jsonb THEN
                RAISE EXCEPTION USING ERRCODE = 'CH032',
                    MESSAGE = format('A transition through gate %L changes no fields', p_action),
                    HINT = 'Update the document first, then pass the gate.';
            END IF;
            v_targets := jsonb_path_query_array(v_contract->'transitions',
                '$[*] ? (@.gate == $gate && @.from == $from && ($to == null || @.to == $to || @.label == $to))',
                jsonb_build_object('gate', p_action, 'from', v_doc.state, 'to', p_to));
            IF jsonb_array_length(v_targets) <> 1 THEN
                RAISE EXCEPTION USING ERRCODE = 'CH035',
                    MESSAGE = CASE WHEN jsonb_array_length(v_targets) = 0
                        THEN format('Gate %L does not lead anywhere from state %L%s', p_action, v_doc.state,
                                    CASE WHEN p_to IS NULL THEN '' ELSE format(' to %L', p_to) END)
                        ELSE format('Gate %L leads from %L to %s; say which with to=', p_action, v_doc.state,
                                    (SELECT string_agg(t->>'to', ' or ') FROM jsonb_array_elements(v_targets) AS t)) END,
                    HINT = format('The legal gates from %L are: %s.', v_doc.state, coalesce(
                        (SELECT string_agg(DISTINCT format('%s (to %s)', t->>'gate', t->>'to'), ', ')
                           FROM jsonb_array_elements(v_contract->'transitions') AS t
                          WHERE t->>'from' = v_doc.state), 'none'));
            END IF;
            v_target := v_targets->0;
            -- A paused instance runs nothing, and nobody moves its document through a gate
            -- meanwhile (read after the lock, as the edit window is).
            IF v_via <> 'workflow' AND EXISTS (
                SELECT FROM charter.workflow_instances AS i
                 WHERE i.org_id = v_org AND i.document_id = v_doc.id AND i.status = 'paused') THEN
                RAISE EXCEPTION USING ERRCODE = 'CH080',
                    MESSAGE = format('Document %L cannot pass gate %L: its workflow instance %s is paused', v_doc.id, p_action,
                        (SELECT i.id FROM charter.workflow_instances AS i
                          WHERE i.org_id = v_org AND i.document_id = v_doc.id AND i.status = 'paused')),
                    HINT = 'An operator resumes it (client.documents.resume, charter documents resume); then pass the gate.';
            END IF;
            -- Only an org's effective workflow may hold a gate (the active instance's, else
            -- the one a new instance would follow): without one, nothing is to check. Read
            -- after the lock, as the edit window is.
            IF v_via <> 'workflow' AND EXISTS (
                SELECT FROM (SELECT) AS document
                  LEFT JOIN charter.workflow_instances AS i
                    ON i.org_id = v_org AND i.document_id = v_doc.id AND i.status IN ('running', 'paused')
                  LEFT JOIN charter.workflow_versions AS v ON v.id = i.version_id
                 WHERE CASE WHEN i.id IS NOT NULL THEN v.definition_kind = 'effective'
                            ELSE EXISTS (SELECT FROM charter.workflows AS w
                                          WHERE w.slug = format('effective:%s:%s', v_org, v_doc.entity_type)) END) THEN
                PERFORM charter._check_gate_not_pending(v_doc, p_action);
            END IF;
            v_new.state := v_target->>'to';
            v_changes := CASE WHEN v_new.state = v_doc.state THEN '{}'::jsonb
                ELSE jsonb_build_object('$state', jsonb_build_object('from', v_doc.state, 'to', v_new.state)) END;
            v_event := 'on_lifecycle_transition';
            v_payload := jsonb_build_object('gate', p_action, 'from', v_doc.state, 'to', v_new.state,
                                            'label', v_target->'label');
        ELSE
            v_allowed := CASE WHEN v_kind = 'action' THEN jsonb_path_query_first(v_contract->'actions',
                '$[*] ? (@.actionType == $action).fields', jsonb_build_object('action', p_action)) END;
            v_changes := coalesce(p_changes, '{}'::jsonb);
            IF jsonb_typeof(v_changes) = 'object' THEN
                v_new.data := v_doc.data || v_changes;
                -- In one pass: what changed ({field: {from, to}}), which fields the change
                -- named, and whether the contract refuses any of them.
                SELECT coalesce(jsonb_object_agg(e.key, jsonb_build_object('from', v_doc.data->e.key, 'to', e.value))
                                    FILTER (WHERE v_doc.data->e.key IS DISTINCT FROM e.value), '{}'::jsonb),
                       jsonb_build_object('action', p_action,
                                          'fields', coalesce(jsonb_agg(e.key ORDER BY e.key), '[]'::jsonb)),
                       coalesce(bool_or(charter._field_refused(v_contract->'fields', v_allowed, e.key, e.value)), false)
                  INTO v_changes, v_payload, v_refused
                  FROM jsonb_each(v_changes) AS e;
            END IF;
            IF v_refused IS NOT FALSE THEN
                -- Refused (or not an object): _checked_changes says what is wrong.
                PERFORM charter._checked_changes(v_contract, p_changes, v_allowed,
                    CASE WHEN v_kind IN ('action', 'handler_action') THEN format('action %s', p_action) ELSE 'update' END);
            END IF;
            v_event := 'on_mutation';
        END IF;
    END IF;

    -- Data too large to keep (DOCUMENT_TOO_LARGE): measured only when it changed and is
    -- large enough to matter (_check_document_size), so a small document costs no call.
    IF (pg_column_size(v_new.data) > 8192 OR v_contract ? 'maxDocumentBytes')
       AND v_new.data IS DISTINCT FROM v_doc.data THEN
        PERFORM charter._check_document_size(v_contract, v_new.data);
    END IF;
    IF v_new.version = 1 THEN
        BEGIN
            INSERT INTO charter.documents (id, org_id, entity_type, contract_version_id, version, state, data)
            VALUES (v_new.id, v_new.org_id, v_new.entity_type, v_new.contract_version_id, 1, v_new.state, v_new.data)
            RETURNING * INTO v_new;
        EXCEPTION WHEN unique_violation THEN
            RAISE EXCEPTION USING ERRCODE = 'CH039',
                MESSAGE = format('Document %L already exists in org %L', v_new.id, v_org),
                HINT = 'Choose another id, or update the existing document.';
        END;
    ELSE
        UPDATE charter.documents
           SET version = v_new.version, state = v_new.state, data = v_new.data, updated_at = now()
         WHERE org_id = v_org AND id = v_new.id
        RETURNING * INTO v_new;
    END IF;
    -- The rest of the record in one statement: the version, its audit row, the event with its
    -- receipt (WF-11) and, when anyone but the workflow changed the document, its unapplied
    -- approvals voided (WF-03: what was approved is no longer what the document says). The
    -- receipt is a plain INSERT, not _emit_event's dedup gate: the document is locked and its
    -- version new, so no event of it with this type and version was ever written, and were
    -- one, the mutation would fail rather than leave its event out.
    v_key := charter._event_key(v_new.id, v_event, v_new.version);
    WITH version_row AS (
        INSERT INTO charter.document_versions (document_id, version, org_id, state, data, changes, action, actor)
        VALUES (v_new.id, v_new.version, v_org, v_new.state, v_new.data, v_changes, p_action, p_actor)),
    audit_row AS (
        INSERT INTO charter.document_audit (org_id, document_id, entity_type, version, action, actor, run_as,
                                            via, node_id, reason, changes, trace_id)
        VALUES (v_org, v_new.id, v_new.entity_type, v_new.version, p_action, p_actor,
                CASE WHEN (v_actor->>'reserved')::boolean THEN p_actor ELSE 'actor' END,
                v_via, CASE WHEN v_via = 'workflow' THEN p_node_id END, p_reason, v_changes, v_trace)),
    voided_decisions AS (
        UPDATE charter.approval_decisions AS d SET voided_at = now(), voided_version = v_new.version
         WHERE v_doc.id IS NOT NULL AND v_via <> 'workflow'
           AND d.org_id = v_org AND d.document_id = v_new.id AND d.applied_at IS NULL AND d.voided_at IS NULL),
    voided_requests AS (
        UPDATE charter.approval_requests AS r
           SET status = 'voided', voided_version = v_new.version, closed_at = now(),
               outcome_reason = format('document changed to version %s', v_new.version)
         WHERE v_doc.id IS NOT NULL AND v_via <> 'workflow'
           AND r.org_id = v_org AND r.document_id = v_new.id AND r.status IN ('pending', 'approved')),
    receipt AS (
        INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key) VALUES (v_org, 'events', v_key))
    -- The workflow's own change is written as applied: the engine makes it at a node, under
    -- the document's lock, and moves its instance to this version in the same transaction
    -- (_dispatch, _pass_gate, _resume_wait), so applying the event would change nothing. It
    -- stays in the outbox as the record of what happened, but no worker claims it.
    INSERT INTO charter.document_events (org_id, document_id, entity_type, entity_version, event_type, payload,
                                         idempotency_key, trace_id, status, completed_at)
    VALUES (v_org, v_new.id, v_new.entity_type, v_new.version, v_event,
            v_payload || jsonb_build_object('actor', p_actor), v_key, v_trace,
            CASE WHEN v_via = 'workflow' THEN 'completed' ELSE 'pending' END,
            CASE WHEN v_via = 'workflow' THEN now() END);
    -- _wake_engine, in an IF: an engine is woken only when one sleeps (and only for an event
    -- it has to apply).
    IF v_via <> 'workflow' AND NOT charter._no_engine_asleep() THEN
        PERFORM pg_notify('charter_events', v_org);
    END IF;
    IF v_window = 'amend_only' THEN
        -- An edit where only amendments may happen: the engine must route it to re-approval.
        PERFORM charter._emit_event(v_org, v_new.id, v_new.entity_type, v_new.version, 'on_amendment',
            jsonb_build_object('action', p_action, 'state', v_doc.state, 'actor', p_actor,
                               'changes', v_changes), v_trace);
    END IF;
    RETURN charter._document_json(v_new) || jsonb_build_object('traceId', v_trace);
END;
$$;
