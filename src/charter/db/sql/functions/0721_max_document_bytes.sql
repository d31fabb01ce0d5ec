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
