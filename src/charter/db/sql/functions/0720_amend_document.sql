-- Amends a document (seed 002 B4). Where its edit window allows edits (editable, or
-- amend_only: then the update forces its amendment event) this is a plain update. Where the
-- window is locked (an active, posted invoice) a new document is created with amended_from pointing to the
-- original, carrying its data plus the changes, at the lifecycle's first state; the
-- original's active workflow instance is cancelled with reason 'amended', it gets an audit
-- row and an on_amended event, and the new document starts its own lifecycle.
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
    v_actor    jsonb;
    v_changes  jsonb;
    v_new      charter.documents;
    v_key      text;
    v_successor text;
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
    SELECT d.id INTO v_successor FROM charter.documents AS d
     WHERE d.org_id = v_org AND d.amended_from = v_doc.id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH035',
            MESSAGE = format('Document %L was already amended by %L', v_doc.id, v_successor),
            HINT = format('Amend %L instead: a document has at most one amendment.', v_successor);
    END IF;
    v_changes := charter._checked_changes(v_contract.contract, p_changes, NULL, 'amend');

    INSERT INTO charter.documents (id, org_id, entity_type, contract_version_id, version, state, data, amended_from)
    VALUES (gen_random_uuid()::text, v_org, v_doc.entity_type, v_doc.contract_version_id, 1,
            v_contract.contract #>> '{states,0,id}', v_doc.data || v_changes, v_doc.id)
    RETURNING * INTO v_new;
    -- At most one active instance per document: the original's ends here.
    -- (The document's row lock, taken above, keeps the engine out meanwhile.)
    PERFORM charter._finish_instance(i.id, i.org_id, 'cancelled', NULL, 'amended')
       FROM charter.workflow_instances AS i
      WHERE i.org_id = v_org AND i.document_id = v_doc.id AND i.status IN ('running', 'paused');
    INSERT INTO charter.document_versions (document_id, version, org_id, state, data, changes, action, actor)
    VALUES (v_new.id, 1, v_org, v_new.state, v_new.data,
            charter._field_changes('{}'::jsonb, v_new.data), 'amend', p_actor);
    INSERT INTO charter.document_audit (org_id, document_id, entity_type, version, action, actor, run_as,
                                        via, reason, changes, trace_id)
    VALUES (v_org, v_new.id, v_new.entity_type, 1, 'amend', p_actor,
            CASE WHEN (v_actor->>'reserved')::boolean THEN p_actor ELSE 'actor' END,
            v_via, p_reason,
            jsonb_build_object('$amendedFrom', v_doc.id) || charter._field_changes(v_doc.data, v_new.data),
            v_trace),
           (v_org, v_doc.id, v_doc.entity_type, v_doc.version, 'amended', p_actor,
            CASE WHEN (v_actor->>'reserved')::boolean THEN p_actor ELSE 'actor' END,
            v_via, p_reason,
            jsonb_build_object('$amendedBy', v_new.id), v_trace);
    PERFORM charter._emit_event(v_org, v_new.id, v_new.entity_type, 1, 'on_create',
        jsonb_build_object('actor', p_actor, 'amendedFrom', v_doc.id), v_trace);
    PERFORM charter._emit_event(v_org, v_doc.id, v_doc.entity_type, v_doc.version, 'on_amended',
        jsonb_build_object('actor', p_actor, 'amendedBy', v_new.id, 'reason', 'amended'), v_trace);
    RETURN charter._document_json(v_new) || jsonb_build_object('traceId', v_trace);
END;
$$;
