-- Whether no documents engine sleeps, taking the 'engine' lock shared until the transaction
-- ends when none does (_wake_engine). A SQL-standard body without a SET clause: PostgreSQL
-- inlines it where it is called, so mutate() decides in an IF whether to wake anyone.
CREATE OR REPLACE FUNCTION charter._no_engine_asleep()
RETURNS boolean
LANGUAGE sql
VOLATILE
RETURN pg_try_advisory_xact_lock_shared(charter._lock_key('engine', 'asleep'));
