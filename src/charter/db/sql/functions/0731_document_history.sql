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
