-- One org's claim: queued tasks whose time has come and started tasks whose lease expired
-- (a crashed worker's), in one index scan with FOR UPDATE SKIP LOCKED (one per version).
-- Each claim counts as an attempt and gets a fresh delivery_token
-- and a lease of p_lease_seconds. An expired task that has no attempts left fails its run
-- instead. Returns what the handler needs: the run input, the dependencies' outputs by
-- name (single steps) or the element (map steps), the idempotency key and the timeout,
-- and for a step that waited (a sleep, a wait_event, a child step) what it waited for.
-- Concurrency limits and rate limits are applied here, across all workers: see
-- _admit_limited. Each task comes back with its org: the worker names a task by its whole
-- key, (id, org_id), when it records the outcome or renews the lease.
CREATE OR REPLACE FUNCTION charter._claim_tasks_of_org(
    p_org text,
    p_worker_id text,
    p_version_ids text[],
    p_limit integer,
    p_lease_seconds integer
)
RETURNS SETOF charter.claimed_task
LANGUAGE plpgsql
AS $$  -- no SET clause: it runs with claim_tasks's settings
#variable_conflict use_column
DECLARE
    v_ids     bigint[];
    v_seed    text;
    v_started timestamptz;
    v_expired record;
    v_final   boolean;
    v_error   jsonb;
    v_limited boolean;
    v_any_expired boolean;
BEGIN
    -- In claim order (priority ages: see _claim_order); a task whose concurrency key is at
    -- its limit is passed over, so it never blocks the tasks behind it. One ordered index
    -- scan per version (a scan over `version_id = ANY (...)` would read and sort the whole
    -- backlog), then the first p_limit of all; the few rows of other versions locked beyond
    -- those are released at commit.
    SELECT coalesce(array_agg(c.id), '{}'), coalesce(bool_or(c.limited), false),
           coalesce(bool_or(c.expired), false)
      INTO v_ids, v_limited, v_any_expired FROM (
        SELECT c.id, c.limited, c.expired FROM unnest(p_version_ids) AS v(id)
         CROSS JOIN LATERAL (
            SELECT t.id, t.limit_key IS NOT NULL OR t.rate_key IS NOT NULL AS limited,
                   t.status = 'started' AS expired,
                   charter._claim_order(t.available_at, t.priority, t.status) AS claim_order
              FROM charter.tasks AS t
             WHERE t.version_id = v.id AND t.org_id = p_org
               AND t.status IN ('queued', 'started')
               AND charter._claim_order(t.available_at, t.priority, t.status) <= now()
               AND t.available_at <= now()
               AND (t.limit_key IS NULL
                    OR (SELECT count(*) FROM charter.tasks AS r
                         WHERE r.limit_key = t.limit_key AND r.org_id = p_org
                           AND r.status = 'started'
                           AND r.available_at > now()) < t.limit_max)
             ORDER BY charter._claim_order(t.available_at, t.priority, t.status)
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED) AS c
         ORDER BY c.claim_order
         LIMIT p_limit) AS c;
    IF v_limited THEN
        v_ids := charter._admit_limited(v_ids, p_org);
    END IF;

    -- The rare path: leases that expired. The attempt they had is recorded as failed.
    FOR v_expired IN
        SELECT t.* FROM charter.tasks AS t
         WHERE v_any_expired AND t.id = ANY (v_ids) AND t.org_id = p_org AND t.status = 'started'
    LOOP
        v_final := v_expired.attempts >= v_expired.max_attempts;
        -- Failing the run needs the run lock; never wait for it while holding task locks.
        IF v_final AND NOT pg_try_advisory_xact_lock(charter._lock_key('run', v_expired.run_id)) THEN
            v_ids := array_remove(v_ids, v_expired.id);
            CONTINUE;
        END IF;
        v_error := jsonb_build_object(
            'type', 'LeaseExpired',
            'message', format('Worker %s stopped renewing the lease of this attempt (it crashed, hung or lost its connection)', v_expired.worker_id),
            'step', v_expired.step_slug, 'taskIndex', v_expired.task_index, 'attempt', v_expired.attempts);
        INSERT INTO charter.step_executions (
            org_id, run_id, step_slug, task_index, attempt, status, terminal, worker_id, started_at, error)
        VALUES (v_expired.org_id, v_expired.run_id, v_expired.step_slug, v_expired.task_index,
                v_expired.attempts, 'failed', v_final, v_expired.worker_id, v_expired.started_at, v_error);
        IF v_final THEN
            v_ids := array_remove(v_ids, v_expired.id);
            UPDATE charter.tasks SET status = 'failed', available_at = NULL
             WHERE id = v_expired.id AND org_id = v_expired.org_id;
            PERFORM charter._fail_run(v_expired.run_id, v_expired.org_id, v_expired.step_slug, v_error);
        END IF;
    END LOOP;

    -- The moment of the claim itself, not of the transaction's start: a claim admitted by
    -- a slot another transaction freed meanwhile starts after it. Each task's delivery
    -- token is the claim's random seed hashed with the task's id: values, not volatile
    -- calls in the UPDATE, which Citus refuses.
    v_started := clock_timestamp();
    v_seed := gen_random_uuid()::text;
    RETURN QUERY
    WITH claimed AS (
        UPDATE charter.tasks AS t
           SET status = 'started',
               attempts = t.attempts + 1,
               delivery_token = md5(v_seed || t.id)::uuid,
               available_at = now() + make_interval(secs => p_lease_seconds),
               worker_id = p_worker_id,
               started_at = v_started
         WHERE t.id = ANY (v_ids) AND t.org_id = p_org
        RETURNING t.id, t.run_id, t.workflow_slug, t.step_slug, t.task_index, t.attempts,
                  t.delivery_token, t.org_id
    )
    -- Every table named by the claim's org itself, not the claimed rows' (the same org): on
    -- Citus the statement then reads one shard group, on one node.
    SELECT c.id, c.run_id, c.workflow_slug, c.step_slug, c.task_index, c.attempts,
           c.delivery_token,
           charter._idempotency_key(c.run_id, c.org_id, c.step_slug, c.task_index),
           r.input,
           CASE WHEN s.step_type = 'single' THEN
               coalesce((SELECT jsonb_object_agg(i.source_step, i.value) FROM charter.inbox AS i
                          WHERE i.run_id = c.run_id AND i.target_step = c.step_slug
                            AND i.spread_index = -1 AND i.org_id = p_org), '{}'::jsonb)
           END,
           CASE WHEN s.step_type = 'map' THEN
               coalesce((SELECT i.value FROM charter.inbox AS i
                          WHERE i.run_id = c.run_id AND i.target_step = c.step_slug
                            AND i.source_step <> c.step_slug AND i.spread_index = -1
                            AND i.org_id = p_org),
                        r.input) -> c.task_index
           END,
           o.timeout_seconds,
           CASE WHEN s.config IS NOT NULL THEN charter._step_resume(c.run_id, c.org_id, c.step_slug, c.task_index, s.step_type, s.config) END,
           c.org_id
      FROM claimed AS c
      JOIN charter.runs AS r ON r.id = c.run_id AND r.org_id = p_org
      JOIN charter.flow_steps AS s ON s.version_id = r.version_id AND s.slug = c.step_slug
      JOIN charter.workflow_versions AS v ON v.id = r.version_id
     CROSS JOIN LATERAL charter._step_options(s.opt_max_attempts, s.opt_base_delay, s.opt_timeout,
                                          s.opt_start_delay, s.opt_limits, v.opt_max_attempts,
                                          v.opt_base_delay, v.opt_timeout, v.opt_start_delay,
                                          v.opt_limits) AS o
     ORDER BY c.id;
END;
$$;
