-- The test clock is per org (issue #38): moving one org's clock (a test, the documents demo)
-- no longer moves time for every other org in the database. The one shared row becomes the
-- clock of the org it named ('default'); every other org starts at the server's time.

ALTER TABLE charter.test_clock RENAME TO test_clock_shared;
ALTER TABLE charter.test_clock_shared RENAME CONSTRAINT test_clock_pkey TO test_clock_shared_pkey;

CREATE TABLE charter.test_clock (
    org_id     text        NOT NULL,
    ahead      interval    NOT NULL DEFAULT '0',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT test_clock_only_moves_forward CHECK (ahead >= interval '0'),
    CONSTRAINT test_clock_pkey PRIMARY KEY (org_id)
);
COMMENT ON TABLE charter.test_clock IS
    'The test clock of each org: how far charter''s now() runs ahead of the server''s for that org, for tests and demos.';
INSERT INTO charter.test_clock (org_id, ahead, updated_at)
SELECT s.org_id, s.ahead, s.updated_at FROM charter.test_clock_shared AS s;
DROP TABLE charter.test_clock_shared;

ALTER TABLE charter.test_clock ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.test_clock
    USING (org_id = current_setting('charter.org_id', true));

-- The clock's functions now name the org they move or read.
DROP FUNCTION IF EXISTS charter.advance_test_clock(interval);
DROP FUNCTION IF EXISTS charter.reset_test_clock();
DROP FUNCTION IF EXISTS charter._now();
