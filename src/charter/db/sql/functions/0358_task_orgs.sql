-- The org of each task named by its id alone (an operator's call), in order; null for a task
-- that is gone. A worker never needs this: claim_tasks gave it every task's org.
CREATE OR REPLACE FUNCTION charter._task_orgs(p_task_ids bigint[])
RETURNS text[]
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT array_agg(t.org_id ORDER BY u.ord)
      FROM unnest(p_task_ids) WITH ORDINALITY AS u(id, ord)
      LEFT JOIN charter.tasks AS t ON t.id = u.id
$$;
