-- The version of the newest applied migration, e.g. '0001'; NULL before any.
CREATE OR REPLACE FUNCTION charter.schema_version()
RETURNS text
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT max(m.version) FROM charter.schema_migrations AS m WHERE m.kind = 'versioned'
$$;
