-- A worker's group recorded and its freed slots filled in one transaction: the tasks the
-- group queued (a chain's next steps) are claimed at once, without a commit and another
-- round trip in between, and a busy worker commits once per group instead of twice.
-- Recording comes first and waits only for run locks; claiming never waits for a run
-- lock (claim_tasks skips locked tasks and only tries run locks), so two workers doing
-- this cannot deadlock. Returns what claim_tasks returns. p_org_ids: each task's org, as
-- record_outcomes takes it.
CREATE OR REPLACE FUNCTION charter.record_outcomes_and_claim(
    p_task_ids bigint[],
    p_tokens uuid[],
    p_outputs jsonb[],
    p_errors jsonb[],
    p_permanent boolean[],
    p_worker_id text,
    p_costs numeric[],
    p_directives jsonb[],
    p_version_ids text[],
    p_limit integer,
    p_lease_seconds integer,
    p_org_ids text[] DEFAULT NULL
)
RETURNS SETOF charter.claimed_task
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    PERFORM FROM charter.record_outcomes(p_task_ids, p_tokens, p_outputs, p_errors, p_permanent,
                                         p_worker_id, p_costs, p_directives, p_org_ids);
    IF p_limit > 0 THEN
        RETURN QUERY SELECT * FROM charter.claim_tasks(p_worker_id, p_version_ids, p_limit,
                                                        p_lease_seconds);
    END IF;
END;
$$;
