-- Named queries used by charter's Python code. Each starts with `-- name: NAME`.

-- name: migrate_lock
-- Serialises concurrent `charter migrate` runs; released when the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('charter:migrate', 0));

-- name: migrations_table_exists
SELECT to_regclass('charter.schema_migrations') IS NOT NULL AS present;

-- name: applied_migrations
SELECT name, kind, version, checksum FROM charter.schema_migrations ORDER BY name;

-- name: record_migration
INSERT INTO charter.schema_migrations (name, kind, version, checksum, charter_version)
VALUES (%(name)s, %(kind)s, %(version)s, %(checksum)s, %(charter_version)s)
ON CONFLICT (name) DO UPDATE
   SET checksum = EXCLUDED.checksum,
       charter_version = EXCLUDED.charter_version,
       applied_at = now();

-- name: ensure_flow_compiled
SELECT charter.ensure_flow_compiled(%(slug)s, %(shape)s, %(mode)s, %(compiled)s);

-- name: deploy_flow
SELECT charter.deploy_flow(%(slug)s, %(shape)s, %(compiled)s);
