-- A step whose arrivals reached required: queue its task, or for a map one task per element
-- of p_source (the run input or its dependency's output). A map over an empty array
-- completes at once with []; a map over something that is not an array fails the run.
-- In a run that is no longer running the step is marked cancelled and nothing is queued
-- (retry_run starts it again). Tasks that already exist are kept, so retrying is safe.
CREATE OR REPLACE FUNCTION charter._start_step(p_run_id text, p_step_slug text, p_source jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_run     charter.runs;
    v_type    text;
    v_max     integer;
    v_delay   integer;
    v_count   integer;
    v_error   jsonb;
BEGIN
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id;
    SELECT s.step_type,
           coalesce(s.opt_max_attempts, v.opt_max_attempts, (charter.flow_option_defaults()->>'maxAttempts')::integer),
           coalesce(s.opt_start_delay, v.opt_start_delay, (charter.flow_option_defaults()->>'startDelay')::integer)
      INTO v_type, v_max, v_delay
      FROM charter.flow_steps AS s JOIN charter.workflow_versions AS v ON v.id = s.version_id
     WHERE s.version_id = v_run.version_id AND s.slug = p_step_slug;

    IF v_type = 'single' THEN
        v_count := 1;
    ELSIF jsonb_typeof(p_source) = 'array' THEN
        v_count := jsonb_array_length(p_source);
    ELSIF v_run.status <> 'running' THEN
        UPDATE charter.step_states SET status = 'cancelled'
         WHERE run_id = p_run_id AND step_slug = p_step_slug;
        RETURN;
    ELSE
        v_error := jsonb_build_object(
            'type', 'MapSourceNotArray',
            'message', format('Step %L maps over an array, but its source gave %s (a JSON %s). Make the source return a list.',
                              p_step_slug, left(p_source::text, 200), jsonb_typeof(p_source)),
            'step', p_step_slug, 'taskIndex', 0, 'attempt', 0);
        INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal, error)
        VALUES (v_run.org_id, p_run_id, p_step_slug, 'failed', true, v_error);
        PERFORM charter._fail_run(p_run_id, p_step_slug, v_error);
        RETURN;
    END IF;

    -- A step started before (being retried) keeps its completed tasks; a fresh one has none,
    -- and CASE spares it the count.
    UPDATE charter.step_states AS s
       SET status = CASE WHEN v_run.status = 'running' THEN 'ready' ELSE 'cancelled' END,
           initial_tasks = v_count,
           remaining_tasks = v_count - CASE WHEN s.initial_tasks IS NULL THEN 0 ELSE (
               SELECT count(*) FROM charter.tasks AS t
                WHERE t.run_id = p_run_id AND t.step_slug = p_step_slug
                  AND t.status = 'completed')::integer END,
           ready_at = coalesce(s.ready_at, now())
     WHERE s.run_id = p_run_id AND s.step_slug = p_step_slug;
    IF v_count = 0 THEN
        PERFORM charter._complete_step(p_run_id, p_step_slug, '[]'::jsonb);
        RETURN;
    END IF;
    IF v_run.status <> 'running' THEN
        RETURN;
    END IF;
    INSERT INTO charter.tasks (org_id, run_id, workflow_slug, version_id, step_slug, task_index,
                               max_attempts, available_at)
    SELECT v_run.org_id, p_run_id, v_run.workflow_slug, v_run.version_id, p_step_slug, i, v_max,
           now() + make_interval(secs => v_delay)
      FROM generate_series(0, v_count - 1) AS i
    ON CONFLICT (run_id, step_slug, task_index) DO NOTHING;
    -- A wake-up hint carrying an id only; workers poll as well (NOTIFY is deduplicated per
    -- transaction, so a batch of starts sends one).
    PERFORM pg_notify('charter_tasks', v_run.workflow_slug);
END;
$$;
