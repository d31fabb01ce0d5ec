-- The idempotency key of one task of a step (WF-02): stable across attempts, so a handler can
-- hand it to the outside world, and the key of its completion receipt.
-- A SQL-standard body, no SET clause and STABLE (as convert_to is): PostgreSQL inlines it
-- where it is used instead of calling it.
CREATE OR REPLACE FUNCTION charter._idempotency_key(p_run_id text, p_step_slug text, p_task_index integer)
RETURNS text
LANGUAGE sql
STABLE
PARALLEL SAFE
RETURN encode(sha256(convert_to(p_run_id || ':' || p_step_slug || ':' || p_task_index, 'UTF8')), 'hex');
