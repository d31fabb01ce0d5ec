-- How large a document's data may be, as JSON text: the database's own setting
-- charter.max_document_bytes (ALTER DATABASE … SET charter.max_document_bytes = '4194304'),
-- else 1 MiB. It is read from the database's defaults, not the session, so no caller raises
-- it with SET; a value below 64 KiB counts as 64 KiB (mutate() skips measuring data too
-- small to reach that), and one that is no number counts as the default.
CREATE OR REPLACE FUNCTION charter._max_document_bytes()
RETURNS bigint
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT greatest(65536, coalesce(
        (SELECT substr(s.setting, length('charter.max_document_bytes=') + 1)::bigint
           FROM pg_catalog.pg_db_role_setting AS r
          CROSS JOIN LATERAL pg_catalog.unnest(r.setconfig) AS s(setting)
          WHERE r.setdatabase = (SELECT d.oid FROM pg_catalog.pg_database AS d
                                  WHERE d.datname = pg_catalog.current_database())
            AND r.setrole = 0
            AND s.setting ~ '^charter\.max_document_bytes=[0-9]{1,15}$'),
        1048576));
$$;

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
