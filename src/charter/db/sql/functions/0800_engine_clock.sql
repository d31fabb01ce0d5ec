-- charter's now(): the server's clock, moved ahead by the test clock (charter.test_clock),
-- which only a development client may move (advance_test_clock). Timers, event timeouts,
-- event retention and expressions' `now` read it.
-- (PL/pgSQL, not SQL, for a plan kept per session: docs/architecture.md, Plans.)
CREATE OR REPLACE FUNCTION charter._now()
RETURNS timestamptz
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    RETURN (
        SELECT now() + coalesce((SELECT c.ahead FROM charter.test_clock AS c WHERE c.id), interval '0')
    );
END;
$$;

-- Moves the test clock forward. Refused unless the transaction says it comes from a
-- development client (SET LOCAL charter.mode = 'development'; charter's Python client does
-- so only in development mode) — and only the schema's owner may call it at all.
CREATE OR REPLACE FUNCTION charter.advance_test_clock(p_by interval)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF coalesce(current_setting('charter.mode', true), '') <> 'development' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047',
            MESSAGE = 'The test clock moves only in development mode',
            HINT = 'Set CHARTER_MODE=development for tests and demos; production time is the server''s.';
    END IF;
    IF p_by IS NULL OR p_by < interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047', MESSAGE = format('The test clock only moves forward, not by %s', p_by),
            HINT = 'Pass a positive duration.';
    END IF;
    INSERT INTO charter.test_clock AS c (id, ahead) VALUES (true, p_by)
    ON CONFLICT (id) DO UPDATE SET ahead = c.ahead + p_by, updated_at = now();
    RETURN charter._now();
END;
$$;

-- Puts the test clock back to the server's time (development only, like advancing it).
CREATE OR REPLACE FUNCTION charter.reset_test_clock()
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF coalesce(current_setting('charter.mode', true), '') <> 'development' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047', MESSAGE = 'The test clock moves only in development mode',
            HINT = 'Set CHARTER_MODE=development for tests and demos.';
    END IF;
    DELETE FROM charter.test_clock;
    RETURN now();
END;
$$;
