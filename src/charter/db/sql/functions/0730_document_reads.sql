-- Reading documents, scoped to the calling org: one (a past version when given), its
-- history (the audit trail), and a list, newest first, a page after a document id.
CREATE OR REPLACE FUNCTION charter.get_document(p_org_id text, p_document_id text, p_version integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
    v_doc charter.documents;
    v_old charter.document_versions;
BEGIN
    SELECT * INTO v_doc FROM charter.documents AS d WHERE d.id = p_document_id AND d.org_id = v_org;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    IF p_version IS NOT NULL AND p_version <> v_doc.version THEN
        SELECT * INTO v_old FROM charter.document_versions AS v
         WHERE v.document_id = v_doc.id AND v.org_id = v_doc.org_id AND v.version = p_version;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH030',
                MESSAGE = format('Document %L has no version %s (its versions are 1 to %s)', v_doc.id, p_version, v_doc.version),
                HINT = 'Ask for an existing version, or none for the current one.';
        END IF;
        v_doc.version := v_old.version;
        v_doc.state := v_old.state;
        v_doc.data := v_old.data;
        v_doc.updated_at := v_old.created_at;
    END IF;
    IF p_version IS NOT NULL AND p_version <> v_doc.version THEN
        RETURN charter._document_json(v_doc);
    END IF;
    RETURN charter._document_json(v_doc) || jsonb_build_object('workflow', charter.document_workflow(v_org, v_doc.id));
END;
$$;

CREATE OR REPLACE FUNCTION charter.document_history(p_org_id text, p_document_id text)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
BEGIN
    IF NOT EXISTS (SELECT 1 FROM charter.documents AS d WHERE d.id = p_document_id AND d.org_id = v_org) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    RETURN QUERY
    SELECT jsonb_build_object('version', a.version, 'action', a.action, 'actor', a.actor,
                              'runAs', a.run_as, 'via', a.via, 'at', a.at, 'reason', a.reason,
                              'changes', a.changes, 'traceId', a.trace_id)
      FROM charter.document_audit AS a
     WHERE a.document_id = p_document_id AND a.org_id = v_org
     ORDER BY a.id;
END;
$$;

CREATE OR REPLACE FUNCTION charter.list_documents(
    p_org_id text, p_entity_type text DEFAULT NULL, p_state text DEFAULT NULL,
    p_limit integer DEFAULT 100, p_after text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org   text := charter._acting_org(p_org_id);
    v_after charter.documents;
BEGIN
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = format('limit %s is out of range', p_limit),
            HINT = 'Use a limit from 1 to 10000, and after= to page.';
    END IF;
    IF p_after IS NOT NULL THEN
        SELECT * INTO v_after FROM charter.documents AS d WHERE d.id = p_after AND d.org_id = v_org;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = format('after=%L names no document of this org', p_after),
                HINT = 'Pass the id of the last document of the previous page.';
        END IF;
    END IF;
    RETURN QUERY
    SELECT charter._document_json(d)
      FROM charter.documents AS d
     WHERE d.org_id = v_org
       AND (p_entity_type IS NULL OR d.entity_type = p_entity_type)
       AND (p_state IS NULL OR d.state = p_state)
       AND (p_after IS NULL OR (d.updated_at, d.id) < (v_after.updated_at, v_after.id))
     ORDER BY d.updated_at DESC, d.id DESC
     LIMIT p_limit;
END;
$$;
