-- One task's completion: a group of one (record_outcomes), so it takes the same path as a
-- worker's groups. Named by id alone, the task's org is looked up.
CREATE OR REPLACE FUNCTION charter.complete_task(
    p_task_id bigint,
    p_token uuid,
    p_output jsonb,
    p_worker_id text DEFAULT NULL,
    p_cost numeric DEFAULT 0
)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    RETURN (SELECT o.outcome FROM charter.record_outcomes(
        ARRAY[p_task_id], ARRAY[p_token], ARRAY[coalesce(p_output, 'null'::jsonb)],
        NULL::jsonb[], NULL::boolean[], p_worker_id, ARRAY[coalesce(p_cost, 0)], NULL, NULL) AS o);
END;
$$;
