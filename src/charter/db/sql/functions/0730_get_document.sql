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
