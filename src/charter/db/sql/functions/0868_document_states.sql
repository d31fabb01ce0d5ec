-- The states of a document's contract (the version it was written under), in order: what
-- documents.wait(until=STATE) may wait for.
CREATE OR REPLACE FUNCTION charter.document_states(p_org_id text, p_document_id text)
RETURNS text[]
LANGUAGE plpgsql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_states text[];
BEGIN
    SELECT ARRAY(SELECT s->>'id' FROM jsonb_array_elements(v.contract->'states') WITH ORDINALITY AS x(s, n) ORDER BY x.n)
      INTO v_states
      FROM charter.documents AS d JOIN charter.workflow_versions AS v ON v.id = d.contract_version_id
     WHERE d.org_id = v_org AND d.id = p_document_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH030',
            MESSAGE = format('Document %L does not exist in org %L', p_document_id, v_org),
            HINT = 'Check the document id and the client''s org.';
    END IF;
    RETURN v_states;
END;
$$;
