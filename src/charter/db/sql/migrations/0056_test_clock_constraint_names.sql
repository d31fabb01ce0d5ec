-- PostgreSQL 18 names NOT NULL constraints. Migration 0048 created the per-org test clock
-- while the renamed shared table still held test_clock_*_not_null, so the new table's took
-- a suffix: give them the names a fresh table has (on PostgreSQL 15 there is nothing to do).
DO $$
DECLARE
    v record;
BEGIN
    FOR v IN SELECT c.conname, a.attname
               FROM pg_catalog.pg_constraint AS c
               JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
              WHERE c.conrelid = 'charter.test_clock'::regclass AND c.contype = 'n'
                AND c.conname <> format('test_clock_%s_not_null', a.attname)
    LOOP
        EXECUTE format('ALTER TABLE charter.test_clock RENAME CONSTRAINT %I TO %I',
                       v.conname, format('test_clock_%s_not_null', v.attname));
    END LOOP;
END
$$;
