-- Appends an operational error (seed 003 queues.error) for a task the worker holds.
-- p_org_id is the task's org, as the claim gave it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.record_task_error(
    p_task_id bigint, p_worker_id text, p_stage text, p_error text, p_context jsonb DEFAULT '{}',
    p_org_id text DEFAULT NULL)
RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    INSERT INTO charter.task_errors (org_id, task_id, task_type, worker_id, stage, error, context)
    SELECT x.org_id, x.id, x.effect_type, p_worker_id, p_stage, left(p_error, 4000), coalesce(p_context, '{}')
      FROM charter.side_effects AS x
     WHERE x.id = p_task_id AND x.org_id = charter._effect_org(p_task_id, p_org_id)
       AND x.worker_id = p_worker_id
     LIMIT 1
$$;
