-- A worker's group of finished attempts in one call and one transaction: each item is a
-- completion (p_errors[i] null: p_outputs[i] is the output) or a failure. All the runs of
-- the group are locked first, in run id order, so two workers recording overlapping
-- groups — completions and failures mixed — cannot deadlock. Two or more plain
-- completions are recorded together (_record_completions), the others (and a lone one) one
-- by one. Returns each task's outcome: completed | retrying | failed | stale, or for a
-- completion with a directive (see _complete_directed) rescheduled | waiting.
-- p_org_ids gives each task's org, as claim_tasks returned it: a task is read by its whole
-- key, (id, org_id), which is one row for the planner and one shard for a distributed
-- PostgreSQL. Without it (an operator's complete_tasks), the orgs are looked up by id.
CREATE OR REPLACE FUNCTION charter.record_outcomes(
    p_task_ids bigint[],
    p_tokens uuid[],
    p_outputs jsonb[],
    p_errors jsonb[],
    p_permanent boolean[],
    p_worker_id text,
    p_costs numeric[],
    p_directives jsonb[] DEFAULT NULL,
    p_org_ids text[] DEFAULT NULL
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
    v_orgs     text[] := coalesce(p_org_ids, charter._task_orgs(p_task_ids));
    v_order    integer[];
    v_plain    integer[];
    v_runs     text[];      -- the group's runs, in the order they are locked
    v_ids      bigint[];
    v_tokens   uuid[];
    v_outcomes text[];
    v_at       integer;
    i          integer;
BEGIN
    -- The group's items in run order (tasks already gone sort last), and its runs locked
    -- in that order before anything is written.
    SELECT array_agg(u.ord ORDER BY t.run_id, u.id, u.ord),
           array_agg(u.ord) FILTER (WHERE p_errors[u.ord] IS NULL AND p_directives[u.ord] IS NULL),
           array_agg(DISTINCT t.run_id ORDER BY t.run_id) FILTER (WHERE t.run_id IS NOT NULL)
      INTO v_order, v_plain, v_runs
      FROM unnest(p_task_ids, v_orgs) WITH ORDINALITY AS u(id, org_id, ord)
      LEFT JOIN charter.tasks AS t ON t.id = u.id AND t.org_id = u.org_id;
    PERFORM pg_advisory_xact_lock(charter._lock_key('run', l.run_id))
       FROM unnest(v_runs) WITH ORDINALITY AS l(run_id, n) ORDER BY l.n;

    -- Plain completions set-based (see _record_completions); the rest one at a time, and
    -- so a group of one, for which the set-based statements cost more to start than the
    -- per-task path costs to run.
    IF cardinality(v_plain) > 1 THEN
        SELECT array_agg(c.task_id), array_agg(c.token), array_agg(c.outcome)
          INTO v_ids, v_tokens, v_outcomes
          FROM charter._record_completions(
                   ARRAY(SELECT p_task_ids[o] FROM unnest(v_plain) AS o),
                   ARRAY(SELECT v_orgs[o] FROM unnest(v_plain) AS o),
                   ARRAY(SELECT p_tokens[o] FROM unnest(v_plain) AS o),
                   ARRAY(SELECT p_outputs[o] FROM unnest(v_plain) AS o),
                   ARRAY(SELECT p_costs[o] FROM unnest(v_plain) AS o),
                   p_worker_id) AS c;
    END IF;
    FOREACH i IN ARRAY v_order LOOP
        task_id := p_task_ids[i];
        v_at := array_position(v_ids, task_id);
        IF v_at IS NOT NULL AND v_tokens[v_at] = p_tokens[i] THEN
            outcome := v_outcomes[v_at];
            v_ids[v_at] := NULL;  -- the same task and token again in the group: stale
        ELSIF p_errors[i] IS NULL THEN
            outcome := charter._complete_one(task_id, v_orgs[i], p_tokens[i],
                                             coalesce(p_outputs[i], 'null'::jsonb), p_worker_id,
                                             coalesce(p_costs[i], 0), p_directives[i]);
        ELSE
            outcome := charter._fail_one(task_id, v_orgs[i], p_tokens[i], p_errors[i],
                                         coalesce(p_permanent[i], false), p_worker_id,
                                         coalesce(p_costs[i], 0));
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
