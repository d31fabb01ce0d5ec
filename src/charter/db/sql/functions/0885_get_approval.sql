CREATE OR REPLACE FUNCTION charter.get_approval(p_org_id text, p_request_id text, p_part text DEFAULT 'request')
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_request  charter.approval_requests;
    v_pinned   charter.document_versions;
    v_previous charter.document_versions;
    v_approved charter.document_versions;
BEGIN
    SELECT * INTO v_request FROM charter.approval_requests AS r WHERE r.org_id = v_org AND r.id = p_request_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH057',
            MESSAGE = format('Approval request %L does not exist in org %L', p_request_id, v_org),
            HINT = 'Take request ids from client.approvals.inbox(user).';
    END IF;
    IF p_part = 'request' THEN
        RETURN charter._request_json(v_request);
    END IF;
    SELECT * INTO v_pinned FROM charter.document_versions AS v
     WHERE v.org_id = v_org AND v.document_id = v_request.document_id AND v.version = v_request.snapshot_version;
    IF p_part = 'snapshot' THEN
        RETURN jsonb_build_object('documentId', v_pinned.document_id, 'version', v_pinned.version,
                                  'state', v_pinned.state, 'data', v_pinned.data, 'at', v_pinned.created_at);
    END IF;
    -- The diff: against the version the last applied approval of this document was for, else
    -- the document's first version.
    SELECT * INTO v_previous FROM charter.document_versions AS v
     WHERE v.org_id = v_org AND v.document_id = v_request.document_id
       AND v.version = coalesce((SELECT max(d.entity_version) FROM charter.approval_decisions AS d
                                  WHERE d.org_id = v_org AND d.document_id = v_request.document_id
                                    AND d.applied_at IS NOT NULL AND d.entity_version < v_pinned.version), 1);
    IF p_part = 'review' THEN
        -- The approver compares with what was last approved: the version of this document an
        -- applied approval was for, else (an amendment, not approved yet) that of the document
        -- it amends; with neither, its first version.
        SELECT v.* INTO v_approved
          FROM charter.approval_decisions AS a
          JOIN charter.document_versions AS v
            ON v.org_id = a.org_id AND v.document_id = a.document_id AND v.version = a.entity_version
         WHERE a.org_id = v_org AND a.applied_at IS NOT NULL AND a.decision = 'approved'
           AND ((a.document_id = v_request.document_id AND a.entity_version < v_pinned.version)
                OR a.document_id = (SELECT d.amended_from FROM charter.documents AS d
                                     WHERE d.org_id = v_org AND d.id = v_request.document_id))
         ORDER BY a.document_id = v_request.document_id DESC, a.entity_version DESC
         LIMIT 1;
        IF FOUND THEN
            RETURN charter._approval_review(v_request, v_pinned, v_approved, true);
        END IF;
        SELECT * INTO v_approved FROM charter.document_versions AS v
         WHERE v.org_id = v_org AND v.document_id = v_request.document_id AND v.version = 1;
        RETURN charter._approval_review(v_request, v_pinned, v_approved, false);
    END IF;
    RETURN jsonb_build_object('documentId', v_pinned.document_id, 'from', v_previous.version, 'to', v_pinned.version,
                              'changes', charter._field_changes(v_previous.data, v_pinned.data));
END;
$$;
