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
