-- A documents engine that found nothing to do asks to sleep until NOTIFY charter_events
-- (charter._wake_engine). 'asleep': it now holds the 'engine' lock for its session, so
-- every transaction that writes events from here on notifies; it must look for work once
-- more (what committed before is visible to that look) and call engine_wakes when it wakes.
-- 'writing': transactions that write events are open and will not notify; look again soon.
-- 'watched': another engine sleeps holding the lock, and will be woken with this one.
CREATE OR REPLACE FUNCTION charter.engine_sleeps()
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_key bigint := charter._lock_key('engine', 'asleep');
BEGIN
    IF pg_try_advisory_lock(v_key) THEN
        RETURN 'asleep';
    ELSIF pg_try_advisory_lock_shared(v_key) THEN
        PERFORM pg_advisory_unlock_shared(v_key);
        RETURN 'writing';
    END IF;
    RETURN 'watched';
END;
$$;
