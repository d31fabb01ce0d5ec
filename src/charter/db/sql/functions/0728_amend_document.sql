-- Amends a document (seed 002 B4). Where its edit window allows edits (editable, or
-- amend_only: then the update forces its amendment event) this is a plain update. Where the
-- window is locked (an active, posted invoice) a new document is created with amended_from pointing to the
-- original, carrying its data plus the changes, at the lifecycle's first state; the
-- original's active workflow instance is cancelled with reason 'amended', it gets an audit
-- row and an on_amended event, and the new document starts its own lifecycle.
-- The amendment supersedes the original: the original records it (amended_by) and no
-- mutation changes it any more (DOCUMENT_AMENDED, naming the amendment). Where the contract
-- declares a state amended the original moves there, as a system act (a new version, its
-- audit row naming who amended, the amendment and why); otherwise it stays in its state,
-- frozen, and the audit row says so. A document is amended at most once: amend its
-- amendment instead (the same refusal).
-- The policy key is 'amend' when the contract has one, else 'update'.
CREATE OR REPLACE FUNCTION charter.amend_document(
    p_org_id text,
    p_document_id text,
    p_changes jsonb,
    p_actor text,
    p_reason text DEFAULT NULL,
    p_trace_id text DEFAULT NULL,
    p_via text DEFAULT 'api'
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_trace    text := coalesce(nullif(p_trace_id, ''), replace(gen_random_uuid()::text, '-', ''));
    v_doc      charter.documents;
    v_contract charter.workflow_versions;
    v_pinned   charter.workflow_versions;
    v_actor    jsonb;
    v_changes  jsonb;
    v_new      charter.documents;
    v_old      charter.documents;
    v_moved    jsonb := '{}'::jsonb;
    v_key      text;
    v_via      text := CASE WHEN charter._is_engine() AND p_via IN ('workflow', 'system') THEN p_via ELSE 'api' END;
BEGIN
    -- The engine's lock order (the document's lock, its row, its instance's waits): an
    -- amendment ends the instance, so it takes them the same way.
    PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_org || '/' || p_document_id));
    SELECT * INTO v_doc FROM charter.documents AS d
     WHERE d.org_id = v_org AND d.id = p_document_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    SELECT * INTO v_contract FROM charter.workflow_versions AS v WHERE v.id = v_doc.contract_version_id;
    IF charter._edit_window(v_contract.contract, v_doc) <> 'locked' THEN
        RETURN charter.mutate(v_org, 'update', v_doc.id, p_changes, p_actor, NULL, NULL,
                              p_reason, v_trace, NULL, p_via, NULL);
    END IF;
    v_actor := charter._directory_actor(v_org, p_actor);
    v_key := CASE WHEN v_contract.contract #> '{policies,amend}' IS NOT NULL THEN 'amend' ELSE 'update' END;
    PERFORM charter._check_policy(v_contract.contract, v_key, v_actor,
        v_doc.data || CASE WHEN jsonb_typeof(p_changes) = 'object' THEN p_changes ELSE '{}'::jsonb END,
        coalesce((SELECT o.data FROM charter.directory_orgs AS o WHERE o.org_id = v_org), '{}'::jsonb),
        jsonb_build_object('action', 'amend', 'state', v_doc.state, 'version', v_doc.version));
    IF v_doc.amended_by IS NOT NULL THEN
        PERFORM charter._document_amended(v_doc);
    END IF;
    v_changes := charter._checked_changes(v_contract.contract, p_changes, NULL, 'amend');
    -- The amendment is a new document: it follows the contract its org is on now (and so
    -- the org's current workflow), its whole data checked against that contract.
    v_pinned := charter._pin_contract(v_org, v_doc.entity_type);
    PERFORM charter._checked_changes(v_pinned.contract, v_doc.data || v_changes, NULL, 'amend');
    PERFORM charter._check_document_size(v_pinned.contract, v_doc.data || v_changes);

    INSERT INTO charter.documents (id, org_id, entity_type, contract_version_id, version, state, data, amended_from)
    VALUES (gen_random_uuid()::text, v_org, v_doc.entity_type, v_pinned.id, 1,
            v_pinned.contract #>> '{states,0,id}', v_doc.data || v_changes, v_doc.id)
    RETURNING * INTO v_new;
    -- At most one active instance per document: the original's ends here.
    -- (The document's row lock, taken above, keeps the engine out meanwhile.)
    PERFORM charter._finish_instance(i.id, i.org_id, 'cancelled', NULL, 'amended')
       FROM charter.workflow_instances AS i
      WHERE i.org_id = v_org AND i.document_id = v_doc.id AND i.status IN ('running', 'paused');
    -- The original is superseded: it records its amendment, and moves to the contract's state
    -- amended where there is one (unless it is there already).
    IF v_contract.contract->'states' @> '[{"id": "amended"}]' AND v_doc.state <> 'amended' THEN
        v_moved := jsonb_build_object('$state', jsonb_build_object('from', v_doc.state, 'to', 'amended'));
    END IF;
    UPDATE charter.documents AS d
       SET amended_by = v_new.id, updated_at = now(),
           state = CASE WHEN v_moved = '{}'::jsonb THEN d.state ELSE 'amended' END,
           version = CASE WHEN v_moved = '{}'::jsonb THEN d.version ELSE d.version + 1 END
     WHERE d.org_id = v_org AND d.id = v_doc.id
    RETURNING * INTO v_old;
    INSERT INTO charter.document_versions (document_id, version, org_id, state, data, changes, action, actor)
    VALUES (v_new.id, 1, v_org, v_new.state, v_new.data,
            charter._field_changes('{}'::jsonb, v_new.data), 'amend', p_actor);
    IF v_moved <> '{}'::jsonb THEN
        INSERT INTO charter.document_versions (document_id, version, org_id, state, data, changes, action, actor)
        VALUES (v_old.id, v_old.version, v_org, v_old.state, v_old.data, v_moved, 'amended', p_actor);
    END IF;
    -- The original's row is the system's act on the actor's amendment: who (actor), the
    -- amendment ($amendedBy), why (reason), and the state it moved to or that it is frozen.
    INSERT INTO charter.document_audit (org_id, document_id, entity_type, version, action, actor, run_as,
                                        via, reason, changes, trace_id)
    VALUES (v_org, v_new.id, v_new.entity_type, 1, 'amend', p_actor,
            CASE WHEN (v_actor->>'reserved')::boolean THEN p_actor ELSE 'actor' END,
            v_via, p_reason,
            jsonb_build_object('$amendedFrom', v_doc.id) || charter._field_changes(v_doc.data, v_new.data),
            v_trace),
           (v_org, v_old.id, v_old.entity_type, v_old.version, 'amended', p_actor, 'system', 'system', p_reason,
            jsonb_build_object('$amendedBy', v_new.id)
                || CASE WHEN v_moved = '{}'::jsonb THEN jsonb_build_object('$frozen', true) ELSE v_moved END,
            v_trace);
    PERFORM charter._emit_event(v_org, v_new.id, v_new.entity_type, 1, 'on_create',
        jsonb_build_object('actor', p_actor, 'amendedFrom', v_doc.id), v_trace);
    PERFORM charter._emit_event(v_org, v_old.id, v_old.entity_type, v_old.version, 'on_amended',
        jsonb_build_object('actor', p_actor, 'amendedBy', v_new.id, 'reason', 'amended',
                           'from', v_doc.state, 'to', v_old.state), v_trace);
    RETURN charter._document_json(v_new) || jsonb_build_object('traceId', v_trace);
END;
$$;
