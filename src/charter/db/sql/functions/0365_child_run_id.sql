-- A child run's id: a UUID made from (parent run, step, task index, key), the same
-- charter.worker.context computes before the child exists.
CREATE OR REPLACE FUNCTION charter._child_run_id(p_run_id text, p_step text, p_task_index integer, p_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT md5(p_run_id || '/' || p_step || '/' || p_task_index || '/' || p_key)::uuid::text
$$;
