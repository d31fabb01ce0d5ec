-- A worker's group of finished attempts in one call and one transaction: each item is a
-- completion (p_errors[i] null: p_outputs[i] is the output) or a failure. All the runs of
-- the group are locked in one order, run id then task id, so two workers recording
-- overlapping groups — completions and failures mixed — cannot deadlock. Returns each
-- task's outcome: completed | retrying | failed | stale, or for a completion with a
-- directive (see _complete_directed) rescheduled | waiting.
CREATE OR REPLACE FUNCTION charter.record_outcomes(
    p_task_ids bigint[],
    p_tokens uuid[],
    p_outputs jsonb[],
    p_errors jsonb[],
    p_permanent boolean[],
    p_worker_id text,
    p_costs numeric[],
    p_directives jsonb[] DEFAULT NULL
)
RETURNS TABLE (task_id bigint, outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- Plans made once per session: re-planning these statements for each call's values cost
-- more than running them. Every statement here reads a few rows by key; without sequential
-- scans, a plan made while the tables were small (a worker starts on an empty queue) still
-- reads by key when they have grown.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_item record;
BEGIN
    FOR v_item IN
        SELECT u.id, u.token, u.output, u.error, u.permanent, u.cost, u.directive
          FROM unnest(p_task_ids, p_tokens, p_outputs, p_errors, p_permanent, p_costs, p_directives)
               AS u(id, token, output, error, permanent, cost, directive)
          LEFT JOIN charter.tasks AS t ON t.id = u.id
         ORDER BY t.run_id, u.id
    LOOP
        task_id := v_item.id;
        IF v_item.error IS NULL THEN
            outcome := charter._complete_one(v_item.id, v_item.token,
                                             coalesce(v_item.output, 'null'::jsonb), p_worker_id,
                                             coalesce(v_item.cost, 0), v_item.directive);
        ELSE
            outcome := charter._fail_one(v_item.id, v_item.token, v_item.error,
                                         coalesce(v_item.permanent, false), p_worker_id,
                                         coalesce(v_item.cost, 0));
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
