-- Starts many runs of one flow in one call: p_inputs is a JSON array, one input per run;
-- p_run_ids (optional) gives each run's id, idempotent per id exactly as start_run. Returns
-- the run ids in input order. One transaction: all start, or none. p_priority applies to all.
-- A flow whose first steps are plain steps (no map over the input, no wait, no sleep, no
-- concurrency or rate limit to render per run) starts set-based: one INSERT per table for
-- the whole batch, the same rows start_run writes one run at a time. Ids that exist already
-- go through start_run, which returns the run or says why the id is taken.
CREATE OR REPLACE FUNCTION charter.start_runs(
    p_flow_slug text,
    p_inputs jsonb,
    p_run_ids text[] DEFAULT NULL,
    p_org_id text DEFAULT 'default',
    p_version_id text DEFAULT NULL,
    p_priority integer DEFAULT NULL
)
RETURNS text[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_now timestamptz := now();  -- a value in CASE and coalesce: Citus evaluates no function there
    v_count      integer;
    v_ids        text[];
    v_index      integer;
    v_version_id text;
    v_created    text[];
    v_bad        text;
    v_first_slugs   text[];
    v_first_max     integer[];
    v_first_delays  integer[];
    v_first_prios   smallint[];
BEGIN
    PERFORM charter._acting_org(p_org_id);  -- ORG_MISMATCH when the transaction set another charter.org_id
    IF jsonb_typeof(p_inputs) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = 'start_runs takes a JSON array of inputs, one per run',
            HINT = 'Pass a list of inputs.';
    END IF;
    v_count := jsonb_array_length(p_inputs);
    IF p_run_ids IS NOT NULL AND cardinality(p_run_ids) <> v_count THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('start_runs got %s inputs but %s run ids', v_count, cardinality(p_run_ids)),
            HINT = 'Give one run id per input, or none.';
    END IF;
    v_version_id := charter._runnable_version(p_flow_slug, p_version_id);
    IF NOT charter._starts_plainly(v_version_id) THEN
        v_ids := '{}';
        FOR v_index IN 0 .. v_count - 1 LOOP
            v_ids := v_ids || (charter.start_run(p_flow_slug, p_inputs -> v_index,
                                                 p_run_ids[v_index + 1], p_org_id, v_version_id,
                                                 p_priority) ->> 'runId');
        END LOOP;
        RETURN v_ids;
    END IF;

    PERFORM charter._check_priority(p_priority);
    -- Arrays are walked with unnest, never subscripted in a statement: a[i] of text scans
    -- from the first element, so a subscript per row costs the square of the batch.
    SELECT coalesce(array_agg(coalesce(r.id, gen_random_uuid()::text) ORDER BY i.n), '{}') INTO v_ids
      FROM generate_series(1, v_count) AS i(n)
      LEFT JOIN unnest(p_run_ids) WITH ORDINALITY AS r(id, n) ON r.n = i.n;
    -- One pass over all inputs; only when one is too deep, the check that names the limit.
    IF jsonb_path_exists(p_inputs, 'strict $[*].**{101}') THEN
        PERFORM charter._check_payload(i.value, format('The run input at index %s', i.n - 1))
           FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS i(value, n);
    END IF;
    SELECT i.id INTO v_bad FROM unnest(v_ids) AS i(id) WHERE length(i.id) NOT BETWEEN 1 AND 200 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('Run id %L must be 1 to 200 characters long', v_bad),
            HINT = 'Pass a shorter run id, or none to get a generated one.';
    END IF;

    -- New ids are the rule: a plain INSERT costs half of one with ON CONFLICT. An id that
    -- is taken (a resend, or the same id twice) undoes it, and the insert that skips taken
    -- ids runs instead.
    BEGIN
        INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input, priority)
        SELECT i.id, p_org_id, p_flow_slug, v_version_id, i.value, p_priority
          FROM ROWS FROM (unnest(v_ids), jsonb_array_elements(p_inputs)) AS i(id, value);
        v_created := v_ids;
    EXCEPTION WHEN unique_violation THEN
        WITH inserted AS (
            INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input, priority)
            SELECT i.id, p_org_id, p_flow_slug, v_version_id, i.value, p_priority
              FROM ROWS FROM (unnest(v_ids), jsonb_array_elements(p_inputs)) AS i(id, value)
            ON CONFLICT (id, org_id) DO NOTHING
            RETURNING id)
        SELECT coalesce(array_agg(id), '{}') INTO v_created FROM inserted;
    END;

    -- Readiness rows: the first steps ready with their one task, the others waiting, and
    -- $end. A chain of plain steps keeps none (see _keeps_readiness).
    IF charter._keeps_readiness(v_version_id) THEN
        INSERT INTO charter.step_states (run_id, step_slug, org_id, required, status,
                                         initial_tasks, remaining_tasks, ready_at)
        SELECT r.id, s.slug, p_org_id, s.required,
               CASE WHEN s.required = 0 THEN 'ready' ELSE 'waiting' END,
               CASE WHEN s.required = 0 THEN 1 END, CASE WHEN s.required = 0 THEN 1 END,
               CASE WHEN s.required = 0 THEN v_now END
          FROM unnest(v_created) AS r(id)
         CROSS JOIN charter._step_requirements(v_version_id) AS s;
    END IF;
    -- The first steps are read once (a join with the function would call it again for each
    -- run, and its guess of 1,000 rows per call priced the insert high enough to compile it).
    SELECT array_agg(s.slug), array_agg(s.max_attempts), array_agg(s.start_delay), array_agg(s.priority)
      INTO v_first_slugs, v_first_max, v_first_delays, v_first_prios
      FROM charter._first_steps(v_version_id) AS s;
    INSERT INTO charter.tasks (org_id, run_id, workflow_slug, version_id, step_slug, task_index,
                               max_attempts, available_at, priority)
    SELECT p_org_id, r.id, p_flow_slug, v_version_id, s.slug, 0, s.max_attempts,
           now() + make_interval(secs => s.start_delay), coalesce(p_priority, s.priority)
      FROM unnest(v_created) AS r(id)
     CROSS JOIN unnest(v_first_slugs, v_first_max, v_first_delays, v_first_prios)
                AS s(slug, max_attempts, start_delay, priority);
    IF cardinality(v_created) > 0 THEN
        PERFORM pg_notify('charter_tasks', p_flow_slug);
    END IF;

    -- Ids that were taken: the same run again, or an error that says why not.
    IF cardinality(v_created) < v_count THEN
        FOR v_index IN
            SELECT u.n FROM (SELECT u.id, u.n, row_number() OVER (PARTITION BY u.id ORDER BY u.n) AS nth
                               FROM unnest(v_ids) WITH ORDINALITY AS u(id, n)) AS u
             WHERE u.nth > 1 OR u.id <> ALL (v_created)
             ORDER BY u.n
        LOOP
            PERFORM charter.start_run(p_flow_slug, p_inputs -> (v_index - 1), v_ids[v_index],
                                      p_org_id, v_version_id, p_priority);
        END LOOP;
    END IF;
    RETURN v_ids;
END;
$$;
