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

-- The furthest any org's test clock runs ahead: a scan over every org's due rows reads up to
-- now() plus this (an index range), then holds each row to its own org's clock (_now(org)).
CREATE OR REPLACE FUNCTION charter._now_at_most()
RETURNS timestamptz
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT now() + greatest(interval '0', coalesce((SELECT max(c.ahead) FROM charter.test_clock AS c), interval '0'))
    );
END;
$$;

CREATE OR REPLACE FUNCTION charter._check_test_clock()
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF coalesce(current_setting('charter.mode', true), '') <> 'development' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047',
            MESSAGE = 'The test clock moves only in development mode',
            HINT = 'Set CHARTER_MODE=development for tests and demos; production time is the server''s.';
    END IF;
END;
$$;

-- Moves the org's test clock forward; other orgs' time does not move. Refused unless the
-- transaction says it comes from a development client (SET LOCAL charter.mode =
-- 'development'; charter's Python client does so only in development mode) — and only the
-- schema's owner may call it at all.
CREATE OR REPLACE FUNCTION charter.advance_test_clock(p_org_id text, p_by interval)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_org text;
BEGIN
    PERFORM charter._check_test_clock();
    v_org := charter._acting_org(p_org_id);
    IF p_by IS NULL OR p_by < interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047', MESSAGE = format('The test clock only moves forward, not by %s', p_by),
            HINT = 'Pass a positive duration.';
    END IF;
    INSERT INTO charter.test_clock AS c (org_id, ahead) VALUES (v_org, p_by)
    ON CONFLICT (org_id) DO UPDATE SET ahead = c.ahead + p_by, updated_at = now();
    RETURN charter._now(v_org);
END;
$$;

-- Puts the org's test clock back to the server's time (development only, like advancing it).
CREATE OR REPLACE FUNCTION charter.reset_test_clock(p_org_id text)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    PERFORM charter._check_test_clock();
    DELETE FROM charter.test_clock AS c WHERE c.org_id = charter._acting_org(p_org_id);
    RETURN now();
END;
$$;
