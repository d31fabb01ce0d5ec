-- The key of every advisory lock charter takes: one namespace per kind, so no id a caller
-- chooses (a run id such as 'flow:orders') can take the lock of anything else.
--   run        a run (or registry invocation) id: every change to one run
--   flow       a workflow slug: compiling, deploying, numbering its versions
--   version    a version id being created
--   document   '<org>/<document id>': a document's workflow instance (WF-01)
--   rule       '<org>:<rule id>': numbering a rule's versions
--   migration  'schema' (queries.sql computes this key inline: the schema may not exist yet)
--   maintenance 'retention': one run of retention at a time
--   concurrency '<org>/<flow>[.<step>][:<key>]': counting and claiming a concurrency key's tasks
--   event      '<org>/<event key>': a wait beginning and an event arriving on that key, one
--              at a time, so neither misses the other
--   engine     'asleep': held (exclusive, by its session) by a documents engine that sleeps
--              until NOTIFY charter_events; a transaction writing events takes it shared
--              when no engine sleeps, and then has no one to wake
CREATE OR REPLACE FUNCTION charter._lock_key(p_kind text, p_id text)
RETURNS bigint
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    IF p_kind NOT IN ('run', 'flow', 'version', 'document', 'rule', 'migration', 'maintenance', 'concurrency', 'event', 'engine') THEN
        RAISE EXCEPTION 'unknown lock kind %', p_kind;
    END IF;
    RETURN hashtextextended(p_kind || ':' || p_id, 0);
END;
$$;
