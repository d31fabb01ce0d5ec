-- The sleeping engine woke (or stops): writers of events stop notifying.
CREATE OR REPLACE FUNCTION charter.engine_wakes()
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT pg_advisory_unlock(charter._lock_key('engine', 'asleep'));
$$;
