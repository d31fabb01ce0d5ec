-- Group completion: several finished tasks in one transaction (one commit for all), as
-- record_outcomes records them: runs locked in id order, each task fenced and processed as
-- complete_task would. Returns each task's outcome. The tasks' orgs are looked up.
CREATE OR REPLACE FUNCTION charter.complete_tasks(
    p_task_ids bigint[],
    p_tokens uuid[],
    p_outputs jsonb[],
    p_worker_id text DEFAULT NULL,
    p_costs numeric[] DEFAULT NULL
)
RETURNS TABLE (task_id bigint, outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    -- No errors: every item is a completion.
    RETURN QUERY SELECT * FROM charter.record_outcomes(
        p_task_ids, p_tokens, p_outputs, NULL, NULL, p_worker_id, p_costs, NULL, NULL);
END;
$$;
