-- The current schema, object by object. `charter migrate` never runs these files: it runs
-- migrations/ in order. A test builds one database from these files and one from the
-- migrations and requires identical catalogs, so the two cannot drift apart.
CREATE SCHEMA charter;
