-- Several failed attempts in one transaction, as record_outcomes records them (runs locked
-- in id order). A missing error is an empty one: every item stays a failure.
CREATE OR REPLACE FUNCTION charter.fail_tasks(
    p_task_ids bigint[],
    p_tokens uuid[],
    p_errors jsonb[],
    p_permanent boolean[],
    p_worker_id text DEFAULT NULL,
    p_costs numeric[] DEFAULT NULL
)
RETURNS TABLE (task_id bigint, outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    RETURN QUERY SELECT * FROM charter.record_outcomes(
        p_task_ids, p_tokens, NULL,
        ARRAY(SELECT coalesce(u.error, '{}'::jsonb)
                FROM unnest(p_task_ids, p_errors) WITH ORDINALITY AS u(id, error, n) ORDER BY u.n),
        p_permanent, p_worker_id, p_costs, NULL, NULL);
END;
$$;
