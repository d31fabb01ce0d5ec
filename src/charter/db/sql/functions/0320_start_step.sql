-- A step whose arrivals reached required: queue its task, or for a map one task per element
-- of p_source (the run input or its dependency's output). A sleep's task is queued for its
-- wake-up time; a wait_event's for its timeout (or for ever), unless its event already
-- arrived. The task carries its priority, concurrency key and rate-limit bucket. A map over an empty array
-- completes at once with []; a map over something that is not an array fails the run.
-- In a run that is no longer running the step is marked cancelled and nothing is queued
-- (retry_run starts it again). Tasks that already exist are kept, and a map's completed
-- elements (their results are in the inbox) are not queued again, so retrying is safe.
CREATE OR REPLACE FUNCTION charter._start_step(p_run_id text, p_org_id text, p_step_slug text, p_source jsonb)
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
    v_config  jsonb;
    v_limits  jsonb;
    v_flow_limits jsonb;
    v_vars    jsonb;
    v_at      timestamptz;
    v_key     text;
    v_limit_key text;
    v_rate_key  text;
    v_event   charter.inbound_events;
    v_now     timestamptz := now();
BEGIN
    SELECT * INTO v_run FROM charter.runs AS r WHERE r.id = p_run_id AND r.org_id = p_org_id;
    SELECT s.step_type, o.max_attempts, o.start_delay, s.config, s.opt_limits, v.opt_limits
      INTO v_type, v_max, v_delay, v_config, v_limits, v_flow_limits
      FROM charter.flow_steps AS s JOIN charter.workflow_versions AS v ON v.id = s.version_id
     CROSS JOIN LATERAL charter._step_options(s.opt_max_attempts, s.opt_base_delay, s.opt_timeout,
                                          s.opt_start_delay, s.opt_limits, v.opt_max_attempts,
                                          v.opt_base_delay, v.opt_timeout, v.opt_start_delay,
                                          v.opt_limits) AS o
     WHERE s.version_id = v_run.version_id AND s.slug = p_step_slug;

    IF v_type <> 'map' THEN
        v_count := 1;
    ELSIF jsonb_typeof(p_source) = 'array' THEN
        v_count := jsonb_array_length(p_source);
    ELSIF v_run.status <> 'running' THEN
        UPDATE charter.step_states SET status = 'cancelled'
         WHERE run_id = p_run_id AND step_slug = p_step_slug AND org_id = p_org_id;
        RETURN;
    ELSE
        v_error := jsonb_build_object(
            'type', 'MapSourceNotArray',
            'message', format('Step %L maps over an array, but its source gave %s (a JSON %s). Make the source return a list.',
                              p_step_slug, left(p_source::text, 200), jsonb_typeof(p_source)),
            'step', p_step_slug, 'taskIndex', 0, 'attempt', 0);
        INSERT INTO charter.step_executions (org_id, run_id, step_slug, status, terminal, error)
        VALUES (p_org_id, p_run_id, p_step_slug, 'failed', true, v_error);
        PERFORM charter._fail_run(p_run_id, p_org_id, p_step_slug, v_error);
        RETURN;
    END IF;

    -- A map step started before (being retried) keeps its completed elements, whose
    -- results are in the inbox; a fresh one has none, and CASE spares it the count.
    UPDATE charter.step_states AS s
       SET status = CASE WHEN v_run.status = 'running' THEN 'ready' ELSE 'cancelled' END,
           initial_tasks = v_count,
           remaining_tasks = v_count - CASE WHEN s.initial_tasks IS NULL OR v_type <> 'map' THEN 0 ELSE (
               SELECT count(*) FROM charter.inbox AS i
                WHERE i.run_id = p_run_id AND i.target_step = p_step_slug
                  AND i.source_step = p_step_slug AND i.spread_index >= 0
                  AND i.org_id = p_org_id)::integer END,
           ready_at = coalesce(s.ready_at, v_now)  -- a value: Citus evaluates no function there
     WHERE s.run_id = p_run_id AND s.step_slug = p_step_slug AND s.org_id = p_org_id;
    IF v_count = 0 THEN
        PERFORM charter._complete_step(p_run_id, p_org_id, p_step_slug, '[]'::jsonb);
        RETURN;
    END IF;
    IF v_run.status <> 'running' THEN
        RETURN;
    END IF;
    v_at := now() + make_interval(secs => v_delay);
    IF v_config IS NOT NULL OR v_limits ?| '{concurrency,rateLimit}' OR v_flow_limits ?| '{concurrency,rateLimit}' THEN
        v_vars := jsonb_build_object('run', v_run.input) || coalesce((
            SELECT jsonb_object_agg(i.source_step, i.value) FROM charter.inbox AS i
             WHERE i.run_id = p_run_id AND i.target_step = p_step_slug AND i.spread_index = -1
               AND i.org_id = p_org_id), '{}'::jsonb);
    END IF;
    IF v_type = 'sleep' THEN
        BEGIN
            v_at := CASE WHEN v_config ? 'seconds' THEN now() + make_interval(secs => (v_config->>'seconds')::integer)
                         ELSE charter._render(v_config->>'until', v_vars)::timestamptz END;
        EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_parameter_value THEN
            PERFORM charter._fail_step_at_start(v_run, p_step_slug, 'SleepUntilInvalid', format(
                'Step %L sleeps until %s, which renders to %L: not a timestamp. Make it an ISO 8601 time, e.g. 2026-12-01T09:00:00Z.',
                p_step_slug, v_config->>'until', charter._render(v_config->>'until', v_vars)));
            RETURN;
        END;
        IF v_at IS NULL THEN
            PERFORM charter._fail_step_at_start(v_run, p_step_slug, 'SleepUntilInvalid', format(
                'Step %L sleeps until %s, which renders to nothing; give the run input that field.', p_step_slug, v_config->>'until'));
            RETURN;
        END IF;
    ELSIF v_type = 'wait_event' THEN
        v_key := charter._render(v_config->>'key', v_vars);
        IF length(v_key) NOT BETWEEN 1 AND 500 THEN
            PERFORM charter._fail_step_at_start(v_run, p_step_slug, 'EventKeyInvalid', format(
                'Step %L waits for an event whose key %s renders to %L; an event key has 1 to 500 characters.',
                p_step_slug, v_config->>'key', v_key));
            RETURN;
        END IF;
        -- One at a time with send_event on this key (see the instance's wait_event node).
        PERFORM pg_advisory_xact_lock(charter._lock_key('event', v_run.org_id || '/' || v_key));
        -- The early-arrival buffer: an event sent before the wait began is taken now.
        UPDATE charter.inbound_events AS e SET consumed_at = now(), consumed_by = p_run_id || '/' || p_step_slug
         WHERE (e.org_id, e.event_id) = (
               SELECT b.org_id, b.event_id FROM charter.inbound_events AS b
                WHERE b.org_id = v_run.org_id AND b.event_key = v_key AND b.consumed_at IS NULL
                  AND b.expires_at > charter._now(v_run.org_id)
                  AND b.document_id IS NULL  -- one sent for a document is that document's
                ORDER BY b.created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING * INTO v_event;
        INSERT INTO charter.flow_event_waits (run_id, step_slug, org_id, event_key, timeout_at, event)
        VALUES (p_run_id, p_step_slug, v_run.org_id, v_key,
                now() + make_interval(secs => (v_config->>'timeout')::integer),
                CASE WHEN v_event.event_id IS NOT NULL THEN jsonb_build_object(
                    'id', v_event.event_id, 'key', v_key, 'payload', v_event.payload) END)
        ON CONFLICT (run_id, step_slug, task_index, org_id) DO NOTHING;
        v_at := CASE WHEN v_event.event_id IS NOT NULL THEN now()
                     ELSE coalesce(now() + make_interval(secs => (v_config->>'timeout')::integer), 'infinity') END;
    END IF;
    v_limit_key := CASE
        WHEN v_limits ? 'concurrency' THEN v_run.org_id || '/' || v_run.workflow_slug || '.' || p_step_slug
             || coalesce(':' || charter._flow_key(v_limits #>> '{concurrency,key}', v_vars), '')
        WHEN v_flow_limits ? 'concurrency' THEN v_run.org_id || '/' || v_run.workflow_slug
             || coalesce(':' || charter._flow_key(v_flow_limits #>> '{concurrency,key}', v_vars), '') END;
    v_rate_key := charter._flow_key(coalesce(v_limits, v_flow_limits) #>> '{rateLimit,key}', v_vars);
    INSERT INTO charter.tasks (org_id, run_id, workflow_slug, version_id, step_slug, task_index,
                               max_attempts, available_at, priority, limit_key, limit_max, rate_key)
    SELECT v_run.org_id, p_run_id, v_run.workflow_slug, v_run.version_id, p_step_slug, i, v_max,
           v_at,
           coalesce(v_run.priority, (v_limits->>'priority')::smallint, (v_flow_limits->>'priority')::smallint, 0),
           v_limit_key,
           coalesce(v_limits #>> '{concurrency,limit}', v_flow_limits #>> '{concurrency,limit}')::integer,
           v_rate_key
      FROM generate_series(0, v_count - 1) AS i
     WHERE v_type <> 'map' OR NOT EXISTS (
           SELECT 1 FROM charter.inbox AS e
            WHERE e.run_id = p_run_id AND e.target_step = p_step_slug
              AND e.source_step = p_step_slug AND e.spread_index = i AND e.org_id = p_org_id)
    ON CONFLICT (run_id, step_slug, task_index, org_id) DO NOTHING;
    -- A wake-up hint carrying an id only; workers poll as well (NOTIFY is deduplicated per
    -- transaction, so a batch of starts sends one).
    PERFORM pg_notify('charter_tasks', v_run.workflow_slug);
END;
$$;
