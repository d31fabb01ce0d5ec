-- Claims up to p_limit tasks of the given flow versions (those the worker's code matches,
-- see register_worker) for a worker, one org at a time (_claim_in_turn): it goes round the
-- orgs that have queued tasks of those versions (_orgs_in_turn) and takes what it can from
-- each (_claim_tasks_of_org) until it has p_limit.
CREATE OR REPLACE FUNCTION charter.claim_tasks(
    p_worker_id text,
    p_version_ids text[],
    p_limit integer,
    p_lease_seconds integer DEFAULT 30
)
RETURNS SETOF charter.claimed_task
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- Plans made once per session: re-planning these statements for each call's values cost
-- more than running them. Every statement here reads a few rows by key; without sequential
-- scans, a plan made while the tables were small (a worker starts on an empty queue) still
-- reads by key when they have grown. The helpers it calls run with these settings (they
-- have no SET clause of their own: each costs every call).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
    RETURN QUERY SELECT * FROM charter._claim_in_turn(NULL::charter.claimed_task, 'tasks', p_worker_id,
                                                       p_version_ids, p_limit, p_lease_seconds);
END;
$$;
