-- The test clock is per org (issue #38): moving one org's clock (a test, the documents demo)
-- no longer moves time for every other org in the database. The one shared row becomes the
-- clock of the org it named ('default'); every other org starts at the server's time.

ALTER TABLE charter.test_clock DROP CONSTRAINT test_clock_pkey;
ALTER TABLE charter.test_clock DROP CONSTRAINT test_clock_is_one_row;
ALTER TABLE charter.test_clock DROP COLUMN id;
ALTER TABLE charter.test_clock ALTER COLUMN org_id DROP DEFAULT;
ALTER TABLE charter.test_clock ADD CONSTRAINT test_clock_pkey PRIMARY KEY (org_id);
COMMENT ON TABLE charter.test_clock IS
    'The test clock of each org: how far charter''s now() runs ahead of the server''s for that org, for tests and demos.';

DROP POLICY org_isolation ON charter.test_clock;
CREATE POLICY org_isolation ON charter.test_clock
    USING (org_id = current_setting('charter.org_id', true));

-- The clock's functions now name the org they move.
DROP FUNCTION IF EXISTS charter.advance_test_clock(interval);
DROP FUNCTION IF EXISTS charter.reset_test_clock();
DROP FUNCTION IF EXISTS charter._now();
