-- What was applied to schema charter (every migration and repeatable file with its
-- checksum), for roles that may not read charter.schema_migrations: a worker or an app
-- checks the schema is current before it starts, without the right to migrate it.
CREATE OR REPLACE FUNCTION charter.schema_state()
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'name', m.name, 'kind', m.kind, 'version', m.version, 'checksum', m.checksum)
               ORDER BY m.name), '[]'::jsonb)
      FROM charter.schema_migrations AS m
$$;
