-- Wakes the documents engine at commit (NOTIFY charter_events) only when an engine sleeps:
-- PostgreSQL commits notifying transactions one at a time (each holds the notify queue's
-- lock until its commit is flushed), so a NOTIFY per mutation would make concurrent
-- mutations wait for each other's fsync. An engine about to sleep holds the 'engine' lock
-- exclusively (charter.engine_sleeps) and looks once more before it sleeps; a transaction
-- that can take the lock shared (_no_engine_asleep) instead commits while no engine sleeps,
-- and holds the lock until it ends, so no engine can start sleeping before that look sees
-- its events.
CREATE OR REPLACE FUNCTION charter._wake_engine(p_org_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF NOT charter._no_engine_asleep() THEN
        PERFORM pg_notify('charter_events', p_org_id);
    END IF;
END;
$$;
