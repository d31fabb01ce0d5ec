CREATE OR REPLACE FUNCTION charter._check_priority(p_priority integer)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    IF p_priority IS NOT NULL AND p_priority NOT BETWEEN 0 AND 1000 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('Priority %s is out of range; use a whole number from 0 to 1000', p_priority),
            HINT = 'Higher runs first: a task of priority N is claimed as if it had been ready N minutes earlier.';
    END IF;
END;
$$;
