-- Refuses (DOCUMENT_TOO_LARGE) data whose JSON text is larger than the contract's
-- maxDocumentBytes, else the database's limit (_max_document_bytes). jsonb's text is at most
-- six times its stored size (a control character, escaped), so data stored in less than a
-- sixth of the limit is never written out to be measured.
CREATE OR REPLACE FUNCTION charter._check_document_size(p_contract jsonb, p_data jsonb)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_limit bigint;
    v_size  bigint;
BEGIN
    v_limit := CASE WHEN jsonb_typeof(p_contract->'maxDocumentBytes') = 'number'
                    THEN (p_contract->>'maxDocumentBytes')::numeric::bigint
                    ELSE charter._max_document_bytes() END;
    IF pg_catalog.pg_column_size(p_data)::bigint * 6 <= v_limit THEN
        RETURN;
    END IF;
    v_size := pg_catalog.octet_length(p_data::text);
    IF v_size > v_limit THEN
        RAISE EXCEPTION USING ERRCODE = 'CH100',
            MESSAGE = format('The document''s data would be %s bytes as JSON, more than the %s bytes %s allows',
                             v_size, v_limit,
                             CASE WHEN p_contract ? 'maxDocumentBytes' THEN 'its contract (maxDocumentBytes)'
                                  ELSE 'this database (charter.max_document_bytes)' END),
            HINT = 'Store large content (files, images, long texts) elsewhere and keep a reference in the document.';
    END IF;
END;
$$;
