-- charter's now() for an org: the server's clock, moved ahead by that org's test clock
-- (charter.test_clock), which only a development client may move (advance_test_clock).
-- Timers, event timeouts, wait and lease deadlines, escalations, delegations, schedules,
-- event retention and expressions' `now` read the clock of the org they belong to, so
-- moving one org's clock fires nothing of another's.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._now(p_org_id text)
RETURNS timestamptz
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT now() + coalesce((SELECT c.ahead FROM charter.test_clock AS c WHERE c.org_id = p_org_id), interval '0')
    );
END;
$$;
