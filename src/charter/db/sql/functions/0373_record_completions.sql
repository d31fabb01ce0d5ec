-- The common case of a worker's group, set-based: completions without a directive of
-- single and sleep steps. Does for all of them at once what _complete_one and
-- _complete_step do for one — fence on delivery_token + status, receipt, evidence row,
-- cost, the step completed, one arrival per successor (or $end), inbox rows, runs
-- completed, successors started — in a handful of statements whatever the group's size,
-- where the per-task path runs about fifteen per task. The caller (record_outcomes) holds
-- every run's advisory lock. Returns an outcome, completed or stale, for each task it
-- took out of the queue, with the token that took it; the tasks it did not (stale tokens,
-- map and wait_event steps) are left to the per-task path.
CREATE OR REPLACE FUNCTION charter._record_completions(
    p_task_ids bigint[],
    p_org_ids text[],
    p_tokens uuid[],
    p_outputs jsonb[],
    p_costs numeric[],
    p_worker_id text
)
RETURNS TABLE (task_id bigint, token uuid, outcome text)
LANGUAGE plpgsql
SET search_path = ''
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := now();  -- a value in the CASE below: Citus evaluates no function there
    v_task      charter.tasks;
    v_deleted   charter.tasks[] := '{}';  -- every task deleted from the queue here
    v_deleted_outputs jsonb[] := '{}';
    v_deleted_costs numeric[] := '{}';
    v_ids       bigint[];   -- those whose receipt was new: completed
    v_runs      text[];
    v_steps     text[];
    v_versions  text[];
    v_orgs      text[];
    v_outputs   jsonb[];
    v_overflow  text[];      -- a node that got more arrivals than it waits for, and its run
    v_end_runs  text[];      -- runs whose $end is complete, and their orgs
    v_end_orgs  text[];
    v_end_sources text[];    -- for a run with one last step, its slug and output
    v_end_outputs jsonb[];
    v_ready_runs  text[];    -- successors ready now, and the output that made them ready
    v_ready_orgs  text[];
    v_ready_steps text[];
    v_ready_sources jsonb[];
    v_parent    charter.runs;
BEGIN
    -- A completed task leaves the queue: the receipt and the evidence row record it. One
    -- DELETE per task by its whole primary key, so each reads one row whatever the plan's
    -- guess (with a part of the key, a plan made on an empty queue scanned the claim index).
    FOR i IN 1 .. coalesce(array_length(p_task_ids, 1), 0) LOOP
        DELETE FROM charter.tasks AS t
         WHERE t.id = p_task_ids[i] AND t.org_id = p_org_ids[i]
           AND t.delivery_token = p_tokens[i] AND t.status = 'started'
           AND EXISTS (SELECT 1 FROM charter.flow_steps AS s
                        WHERE s.version_id = t.version_id AND s.slug = t.step_slug
                          AND s.step_type IN ('single', 'sleep'))
        RETURNING * INTO v_task;
        CONTINUE WHEN NOT FOUND;
        PERFORM charter._check_payload(coalesce(p_outputs[i], 'null'::jsonb),
                                       format('The output of step %L', v_task.step_slug));
        v_deleted := v_deleted || v_task;
        v_deleted_outputs := v_deleted_outputs || coalesce(p_outputs[i], 'null'::jsonb);
        v_deleted_costs := v_deleted_costs || coalesce(p_costs[i], 0);
    END LOOP;
    IF cardinality(v_deleted) = 0 THEN
        RETURN;
    END IF;

    WITH deleted AS (
        SELECT t.*, o.output, o.cost,
               charter._idempotency_key(t.run_id, t.org_id, t.step_slug, t.task_index) AS key
          FROM unnest(v_deleted) WITH ORDINALITY AS t
          JOIN unnest(v_deleted_outputs, v_deleted_costs) WITH ORDINALITY AS o(output, cost, ord)
            ON o.ord = t.ordinality
    ), receipted AS (
        INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id)
        SELECT d.run_id, d.key, d.org_id FROM deleted AS d
        ON CONFLICT DO NOTHING
        RETURNING run_id, idempotency_key, org_id
    ), done AS (
        SELECT d.* FROM deleted AS d
          JOIN receipted AS r ON r.run_id = d.run_id AND r.idempotency_key = d.key
                             AND r.org_id = d.org_id
    ), evidence AS (
        INSERT INTO charter.step_executions (
            org_id, run_id, step_slug, task_index, attempt, status, terminal, idempotency_key,
            worker_id, started_at, output)
        SELECT d.org_id, d.run_id, d.step_slug, d.task_index, d.attempts, 'completed', true, d.key,
               coalesce(p_worker_id, d.worker_id), d.started_at, d.output
          FROM done AS d
    ), costs AS (
        UPDATE charter.runs AS r SET usd_cost = r.usd_cost + c.cost
          FROM (SELECT d.run_id, d.org_id, sum(d.cost) AS cost FROM done AS d
                 WHERE d.cost > 0 GROUP BY d.run_id, d.org_id) AS c
         WHERE r.id = c.run_id AND r.org_id = c.org_id
    ), finished AS (
        UPDATE charter.step_states AS s
           SET status = 'completed', remaining_tasks = 0, completed_at = now()
          FROM done AS d
         WHERE s.run_id = d.run_id AND s.step_slug = d.step_slug AND s.org_id = d.org_id
    )
    SELECT array_agg(d.id), array_agg(d.run_id), array_agg(d.step_slug), array_agg(d.version_id),
           array_agg(d.org_id), array_agg(d.output)
      INTO v_ids, v_runs, v_steps, v_versions, v_orgs, v_outputs
      FROM done AS d;

    IF v_ids IS NOT NULL THEN
        -- One arrival per successor, or at $end for a step that has none; a group's
        -- arrivals at one node are counted together. The inbox keeps each output for the
        -- node it arrived at (a run with one last step takes it straight into its output).
        WITH done AS (
            SELECT * FROM unnest(v_ids, v_runs, v_steps, v_versions, v_orgs, v_outputs)
                AS d(id, run_id, step_slug, version_id, org_id, output)
        ), versions AS MATERIALIZED (
            -- Once per version of the group (inlined, it was asked once per task).
            SELECT v.id, charter._keeps_readiness(v.id) AS keeps
              FROM (SELECT DISTINCT d.version_id AS id FROM done AS d) AS v
        ), arrivals AS (
            SELECT d.id, d.run_id, coalesce(dep.step_slug, '$end') AS target,
                   d.step_slug AS source, d.org_id, d.output, v.keeps
              FROM done AS d
              JOIN versions AS v ON v.id = d.version_id
              LEFT JOIN charter.flow_step_deps AS dep
                ON dep.version_id = d.version_id AND dep.dep_slug = d.step_slug
        ), counted AS (
            -- The last arrival's output is what a node started now receives (a map's
            -- elements), and what a run with one last step keeps.
            SELECT a.run_id, a.org_id, a.target, count(*)::integer AS n, bool_and(a.keeps) AS keeps,
                   (array_agg(a.source ORDER BY a.id DESC))[1] AS source,
                   (array_agg(a.output ORDER BY a.id DESC))[1] AS output
              FROM arrivals AS a
             GROUP BY a.run_id, a.org_id, a.target
        ), counted_at_rows AS (
            UPDATE charter.step_states AS s
               SET arrivals = s.arrivals + c.n,
                   status = CASE WHEN c.target = '$end' AND s.arrivals + c.n = s.required
                                 THEN 'completed' ELSE s.status END,
                   completed_at = CASE WHEN c.target = '$end' AND s.arrivals + c.n = s.required
                                       THEN v_now ELSE s.completed_at END
              FROM counted AS c
             WHERE s.run_id = c.run_id AND s.step_slug = c.target AND s.org_id = c.org_id
               AND s.arrivals + c.n <= s.required AND c.keeps
            RETURNING s.run_id, s.org_id, s.step_slug, s.arrivals, s.required, c.source, c.output
        ), arrived AS (
            -- A chain's run keeps no readiness rows: each arrival is its node's only one, so
            -- the node is ready (or $end complete) with it.
            SELECT * FROM counted_at_rows
            UNION ALL
            SELECT c.run_id, c.org_id, c.target, c.n, 1, c.source, c.output
              FROM counted AS c WHERE NOT c.keeps AND c.n = 1
        ), inboxed AS (
            INSERT INTO charter.inbox (run_id, target_step, source_step, org_id, value)
            SELECT a.run_id, a.target, a.source, a.org_id, a.output
              FROM arrivals AS a
              JOIN arrived AS r ON r.run_id = a.run_id AND r.step_slug = a.target AND r.org_id = a.org_id
             WHERE a.target <> '$end' OR r.required > 1
        )
        SELECT (SELECT array[c.target, c.run_id] FROM counted AS c
                 WHERE NOT EXISTS (SELECT 1 FROM arrived AS r
                                    WHERE r.run_id = c.run_id AND r.step_slug = c.target
                                      AND r.org_id = c.org_id)
                 LIMIT 1),
               array_agg(r.run_id) FILTER (WHERE r.step_slug = '$end' AND r.arrivals = r.required),
               array_agg(r.org_id) FILTER (WHERE r.step_slug = '$end' AND r.arrivals = r.required),
               array_agg(CASE WHEN r.required = 1 THEN r.source END)
                   FILTER (WHERE r.step_slug = '$end' AND r.arrivals = r.required),
               array_agg(CASE WHEN r.required = 1 THEN r.output END)
                   FILTER (WHERE r.step_slug = '$end' AND r.arrivals = r.required),
               array_agg(r.run_id) FILTER (WHERE r.step_slug <> '$end' AND r.arrivals = r.required),
               array_agg(r.org_id) FILTER (WHERE r.step_slug <> '$end' AND r.arrivals = r.required),
               array_agg(r.step_slug) FILTER (WHERE r.step_slug <> '$end' AND r.arrivals = r.required),
               array_agg(r.output) FILTER (WHERE r.step_slug <> '$end' AND r.arrivals = r.required)
          INTO v_overflow, v_end_runs, v_end_orgs, v_end_sources, v_end_outputs,
               v_ready_runs, v_ready_orgs, v_ready_steps, v_ready_sources
          -- One sort feeds every aggregate, in run order (eight sorts, one per aggregate,
          -- were most of this statement's time for a small group).
          FROM (SELECT * FROM arrived ORDER BY run_id, org_id, step_slug) AS r;
        IF v_overflow IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH009',
                MESSAGE = format('Readiness overflow: step %L of run %L received more arrivals than it has dependencies',
                                 v_overflow[1], v_overflow[2]),
                HINT = 'This is a bug in charter; the transaction was rolled back and nothing changed.';
        END IF;

        -- Runs whose $end heard from its last step: completed, announced, parents woken. A
        -- run with one last step takes its output straight from it; others from the inbox.
        IF v_end_runs IS NOT NULL THEN
            UPDATE charter.runs AS r
               SET status = 'completed', finished_at = now(), updated_at = now(),
                   output = CASE WHEN e.source IS NOT NULL THEN jsonb_build_object(e.source, e.output)
                                 ELSE (SELECT jsonb_object_agg(i.source_step, i.value)
                                         FROM charter.inbox AS i
                                        WHERE i.run_id = r.id AND i.target_step = '$end'
                                          AND i.org_id = r.org_id) END
              FROM unnest(v_end_runs, v_end_orgs, v_end_sources, v_end_outputs)
                   AS e(run_id, org_id, source, output)
             WHERE r.id = e.run_id AND r.org_id = e.org_id AND r.status = 'running';
            PERFORM pg_notify('charter_runs', e.run_id) FROM unnest(v_end_runs) AS e(run_id);
            FOR v_parent IN
                SELECT r.* FROM unnest(v_end_runs, v_end_orgs) AS e(run_id, org_id)
                  JOIN charter.runs AS r ON r.id = e.run_id AND r.org_id = e.org_id
                 WHERE r.parent_run_id IS NOT NULL
                 ORDER BY r.id
            LOOP
                PERFORM charter._wake_parent(v_parent);
            END LOOP;
        END IF;

        -- Successors whose last dependency arrived now: started, in run order.
        FOR i IN 1 .. coalesce(array_length(v_ready_runs, 1), 0) LOOP
            PERFORM charter._start_step(v_ready_runs[i], v_ready_orgs[i], v_ready_steps[i], v_ready_sources[i]);
        END LOOP;
    END IF;

    RETURN QUERY
    SELECT t.id, t.delivery_token, CASE WHEN t.id = ANY (v_ids) THEN 'completed' ELSE 'stale' END
      FROM unnest(v_deleted) AS t;
END;
$$;
