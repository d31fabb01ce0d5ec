-- Starts a run of the flow's current version: the run row, one readiness row per step (and
-- $end, which completes the run) unless the flow is a chain of plain steps, and the root
-- steps' tasks (what the version's steps say is read from flow_version_facts). Idempotent on a caller's run id
-- within the org (another org's run of the same id is another run): the same id with the
-- same flow and input returns the existing run; with another flow or input it is
-- RUN_ID_CONFLICT. p_version_id runs a given runnable version of the flow
-- instead of the current one. p_priority (0-1000) orders its tasks (see _claim_order);
-- p_parent ({"runId", "step", "taskIndex", "key"}) makes it a child run. Returns
-- {"runId", "created", "status", "versionId"}.
CREATE OR REPLACE FUNCTION charter.start_run(
    p_flow_slug text,
    p_input jsonb,
    p_run_id text DEFAULT NULL,
    p_org_id text DEFAULT 'default',
    p_version_id text DEFAULT NULL,
    p_priority integer DEFAULT NULL,
    p_parent jsonb DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- Plans made once per session (as the claim's): a custom plan for each call's run id cost
-- more to make than to run. Every statement reads or writes a few rows by key, so no
-- sequential scan, even with a plan made while the tables were empty. The helpers it calls
-- (_start_step) run with these settings.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_input      jsonb := coalesce(p_input, 'null'::jsonb);
    v_version_id text;
    v_run_id     text := coalesce(p_run_id, gen_random_uuid()::text);
    v_existing   charter.runs;
    v_facts      charter.flow_version_facts;
    v_slug       text;
BEGIN
    PERFORM charter._acting_org(p_org_id);  -- ORG_MISMATCH when the transaction set another charter.org_id
    v_version_id := charter._runnable_version(p_flow_slug, p_version_id);
    PERFORM charter._check_payload(v_input, 'The run input');
    PERFORM charter._check_priority(p_priority);
    IF length(v_run_id) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('Run id %L must be 1 to 200 characters long', v_run_id),
            HINT = 'Pass a shorter run id, or none to get a generated one.';
    END IF;
    SELECT * INTO v_facts FROM charter.flow_version_facts AS f WHERE f.version_id = v_version_id;
    IF cardinality(v_facts.map_roots) > 0 AND jsonb_typeof(v_input) <> 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('Flow %L maps step %L over the run input, so the input must be a JSON array, not %s',
                             p_flow_slug, v_facts.map_roots[1], jsonb_typeof(v_input)),
            HINT = 'Start the run with a list as its input.';
    END IF;

    INSERT INTO charter.runs (id, org_id, workflow_slug, version_id, input, priority,
                              parent_run_id, parent_step, parent_task_index, child_key)
    VALUES (v_run_id, p_org_id, p_flow_slug, v_version_id, v_input, p_priority,
            p_parent->>'runId', p_parent->>'step', (p_parent->>'taskIndex')::integer, p_parent->>'key')
    ON CONFLICT (id, org_id) DO NOTHING;
    IF NOT FOUND THEN
        SELECT * INTO v_existing FROM charter.runs AS r WHERE r.id = v_run_id AND r.org_id = p_org_id;
        IF v_existing.workflow_slug <> p_flow_slug OR v_existing.input <> v_input THEN
            RAISE EXCEPTION USING ERRCODE = 'CH006',
                MESSAGE = format('Run %L already exists with %s', v_run_id,
                    CASE WHEN v_existing.workflow_slug <> p_flow_slug
                         THEN format('flow %L, not %L', v_existing.workflow_slug, p_flow_slug)
                         ELSE 'a different input' END),
                HINT = 'A run id names one run: reuse it only to start that same run again (same flow and input), or choose a new id.';
        END IF;
        RETURN jsonb_build_object('runId', v_run_id, 'created', false,
                                  'status', v_existing.status, 'versionId', v_existing.version_id);
    END IF;

    -- A chain of plain steps keeps no readiness rows (see _keeps_readiness). Its one root,
    -- when it is a plain step without limits (its options may be tuned, so they are read
    -- here), gets its task in one statement: what _start_step would write.
    IF coalesce(v_facts.keeps_readiness, true) THEN
        INSERT INTO charter.step_states (run_id, step_slug, org_id, required)
        SELECT v_run_id, s.slug, p_org_id, s.required
          FROM charter._step_requirements(v_version_id) AS s;
    ELSE
        INSERT INTO charter.tasks (org_id, run_id, workflow_slug, version_id, step_slug, task_index,
                                   max_attempts, available_at, priority)
        SELECT p_org_id, v_run_id, p_flow_slug, v_version_id, s.slug, 0,
               o.max_attempts, now() + make_interval(secs => o.start_delay),
               coalesce(p_priority, o.priority)
          FROM charter.flow_steps AS s JOIN charter.workflow_versions AS v ON v.id = s.version_id
         CROSS JOIN LATERAL charter._step_options(s.opt_max_attempts, s.opt_base_delay, s.opt_timeout,
                                          s.opt_start_delay, s.opt_limits, v.opt_max_attempts,
                                          v.opt_base_delay, v.opt_timeout, v.opt_start_delay,
                                          v.opt_limits) AS o
         WHERE s.version_id = v_version_id AND s.slug = v_facts.root_steps[1]
           AND s.step_type = 'single' AND s.config IS NULL
           AND NOT coalesce(s.opt_limits ?| '{concurrency,rateLimit}', false)
           AND NOT coalesce(v.opt_limits ?| '{concurrency,rateLimit}', false);
        IF FOUND THEN
            PERFORM pg_notify('charter_tasks', p_flow_slug);
            RETURN jsonb_build_object('runId', v_run_id, 'created', true, 'status', 'running',
                                      'versionId', v_version_id);
        END IF;
    END IF;
    FOREACH v_slug IN ARRAY coalesce(v_facts.root_steps, '{}') LOOP
        PERFORM charter._start_step(v_run_id, p_org_id, v_slug, v_input);
    END LOOP;
    RETURN jsonb_build_object('runId', v_run_id, 'created', true,
                              'status', (SELECT r.status FROM charter.runs AS r
                                          WHERE r.id = v_run_id AND r.org_id = p_org_id),
                              'versionId', v_version_id);
END;
$$;
