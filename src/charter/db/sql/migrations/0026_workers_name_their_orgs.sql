-- A worker given its orgs (`charter worker --org`) records them when it registers, so
-- `charter workers` shows which orgs each one serves; NULL is every org.
ALTER TABLE charter.workers ADD COLUMN orgs text[];
COMMENT ON COLUMN charter.workers.orgs IS
    'The orgs the worker serves (charter worker --org), or NULL for every org.';
