-- One failed attempt, named by its task's id alone: the task's org is looked up.
CREATE OR REPLACE FUNCTION charter.fail_task(
    p_task_id bigint,
    p_token uuid,
    p_error jsonb,
    p_permanent boolean DEFAULT false,
    p_worker_id text DEFAULT NULL,
    p_cost numeric DEFAULT 0
)
RETURNS text
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._fail_one(p_task_id, (charter._task_orgs(ARRAY[p_task_id]))[1],
                             p_token, p_error, coalesce(p_permanent, false), p_worker_id, p_cost)
$$;
