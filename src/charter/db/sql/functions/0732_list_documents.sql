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
    SELECT charter._document_json(ROW(d.*)::charter.documents)
      FROM charter.documents AS d
     WHERE d.org_id = v_org
       AND (p_entity_type IS NULL OR d.entity_type = p_entity_type)
       AND (p_state IS NULL OR d.state = p_state)
       AND (p_after IS NULL OR (d.updated_at, d.id) < (v_after.updated_at, v_after.id))
     ORDER BY d.updated_at DESC, d.id DESC
     LIMIT p_limit;
END;
$$;
