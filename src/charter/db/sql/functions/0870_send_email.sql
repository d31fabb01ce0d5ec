-- Seed 003's email example, as written: a kickoff enqueues the supervisor; the supervisor
-- reads append-only facts, schedules one email attempt at a time (at most max_attempts),
-- enqueues itself again, and stops at the success fact or when out of attempts or time.
-- The handlers record the attempt's outcome as facts; uniqueness makes each at most once.
-- Each reads only rows of the org the worker's call is scoped to (charter.org_id, set by
-- run_function from the task's org): a payload naming another org's id finds nothing.

-- Facts (input). Seed 003 names them by the email task's id; the org (the rest of the
-- task's key) is looked up when not given, and the supervisor gives it.
CREATE OR REPLACE FUNCTION charter._email_task_org(p_send_email_task_id bigint, p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
BEGIN
    IF p_org_id IS NOT NULL THEN
        RETURN p_org_id;
    END IF;
    RETURN (SELECT t.org_id FROM charter.send_email_tasks AS t WHERE t.id = p_send_email_task_id);
END;
$$;

CREATE OR REPLACE FUNCTION charter.has_send_email_task_succeeded(
    p_send_email_task_id bigint, p_org_id text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT EXISTS (SELECT 1 FROM charter.send_email_task_succeeded AS f
                    WHERE f.send_email_task_id = p_send_email_task_id
                      AND f.org_id = charter._email_task_org(p_send_email_task_id, p_org_id))
$$;

CREATE OR REPLACE FUNCTION charter.count_send_email_task_failures(
    p_send_email_task_id bigint, p_org_id text DEFAULT NULL)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT count(*)::integer FROM charter.send_email_task_failed AS f
     WHERE f.send_email_task_id = p_send_email_task_id
       AND f.org_id = charter._email_task_org(p_send_email_task_id, p_org_id)
$$;

CREATE OR REPLACE FUNCTION charter.count_send_email_task_scheduled(
    p_send_email_task_id bigint, p_org_id text DEFAULT NULL)
RETURNS integer
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT count(*)::integer FROM charter.send_email_task_scheduled AS f
     WHERE f.send_email_task_id = p_send_email_task_id
       AND f.org_id = charter._email_task_org(p_send_email_task_id, p_org_id)
$$;

-- The supervisor: payload {"send_email_task_id": X}.
CREATE OR REPLACE FUNCTION charter.send_email_supervisor(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_task      charter.send_email_tasks;
    v_succeeded boolean;
    v_failures  integer;
    v_scheduled integer;
    v_attempt   integer;
    v_task_id   bigint;
BEGIN
    SELECT * INTO v_task FROM charter.send_email_tasks AS t
     WHERE t.id = (p_payload->>'send_email_task_id')::bigint
       AND t.org_id = current_setting('charter.org_id', true)
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('no send_email_task %s', coalesce(p_payload->>'send_email_task_id', '(missing)')));
    END IF;
    -- Input.
    v_succeeded := charter.has_send_email_task_succeeded(v_task.id, v_task.org_id);
    v_failures := charter.count_send_email_task_failures(v_task.id, v_task.org_id);
    v_scheduled := charter.count_send_email_task_scheduled(v_task.id, v_task.org_id);
    -- Terminal: a success fact, out of attempts, or out of time.
    IF v_succeeded THEN
        RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object('state', 'succeeded'));
    END IF;
    IF v_failures >= v_task.max_attempts THEN
        RETURN jsonb_build_object('success', true, 'payload',
                                  jsonb_build_object('state', 'failed', 'attempts', v_failures));
    END IF;
    IF now() >= v_task.give_up_at THEN
        RETURN jsonb_build_object('success', true, 'payload',
                                  jsonb_build_object('state', 'gave_up', 'attempts', v_scheduled));
    END IF;
    -- Compute + output: one attempt outstanding at a time.
    IF v_scheduled <= v_failures THEN
        v_attempt := v_scheduled + 1;
        v_task_id := charter.enqueue_task(v_task.org_id, 'email', jsonb_build_object(
            'send_email_task_id', v_task.id, 'attempt', v_attempt,
            'before_handler', 'charter.get_email_payload',
            'success_handler', 'charter.record_email_success',
            'error_handler', 'charter.record_email_failure'));
        INSERT INTO charter.send_email_task_scheduled (org_id, send_email_task_id, attempt, task_id)
        VALUES (v_task.org_id, v_task.id, v_attempt, v_task_id);
    END IF;
    -- Again shortly, until terminal.
    PERFORM charter.enqueue_task(v_task.org_id, 'db_function',
        jsonb_build_object('db_function', 'charter.send_email_supervisor', 'send_email_task_id', v_task.id),
        now() + v_task.recheck_after);
    RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object(
        'state', 'sending', 'scheduled', greatest(v_scheduled, coalesce(v_attempt, 0)), 'failures', v_failures));
END;
$$;

-- Handlers (seed 003 payload contracts).
CREATE OR REPLACE FUNCTION charter.get_email_payload(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_message charter.email_messages;
BEGIN
    SELECT m.* INTO v_message FROM charter.send_email_tasks AS t
      JOIN charter.email_messages AS m ON m.id = t.email_message_id AND m.org_id = t.org_id
     WHERE t.id = (p_payload->>'send_email_task_id')::bigint
       AND t.org_id = current_setting('charter.org_id', true);
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('no email for send_email_task %s', coalesce(p_payload->>'send_email_task_id', '(missing)')));
    END IF;
    IF charter.has_send_email_task_succeeded((p_payload->>'send_email_task_id')::bigint, v_message.org_id) THEN
        RETURN jsonb_build_object('success', false, 'validation_failure_message',
            format('send_email_task %s was sent already', p_payload->>'send_email_task_id'));
    END IF;
    RETURN jsonb_build_object('success', true, 'payload', jsonb_build_object(
        'to', v_message.recipient, 'subject', v_message.subject, 'body', v_message.body,
        'idempotency_key', 'send_email_task:' || (p_payload->>'send_email_task_id')));
END;
$$;

CREATE OR REPLACE FUNCTION charter.record_email_success(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_original jsonb := p_payload->'original_payload';
BEGIN
    INSERT INTO charter.send_email_task_succeeded (org_id, send_email_task_id, attempt, provider_response)
    SELECT t.org_id, t.id, (v_original->>'attempt')::integer, coalesce(p_payload->'worker_payload', '{}'::jsonb)
      FROM charter.send_email_tasks AS t
     WHERE t.id = (v_original->>'send_email_task_id')::bigint AND t.org_id = current_setting('charter.org_id', true)
    ON CONFLICT DO NOTHING;
    RETURN jsonb_build_object('success', true);
END;
$$;

CREATE OR REPLACE FUNCTION charter.record_email_failure(p_payload jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_original jsonb := p_payload->'original_payload';
BEGIN
    INSERT INTO charter.send_email_task_failed (org_id, send_email_task_id, attempt, error)
    SELECT t.org_id, t.id, (v_original->>'attempt')::integer, coalesce(p_payload->>'error', 'unknown error')
      FROM charter.send_email_tasks AS t
     WHERE t.id = (v_original->>'send_email_task_id')::bigint AND t.org_id = current_setting('charter.org_id', true)
    ON CONFLICT DO NOTHING;
    RETURN jsonb_build_object('success', true);
END;
$$;

-- Kickoff: enqueues the supervisor for a send_email_task at p_scheduled_at. p_org_id is the
-- task's org (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.kickoff_send_email_task(p_send_email_task_id bigint,
                                                           p_scheduled_at timestamptz DEFAULT now(),
                                                           p_org_id text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter.enqueue_task(t.org_id, 'db_function',
               jsonb_build_object('db_function', 'charter.send_email_supervisor', 'send_email_task_id', t.id),
               p_scheduled_at)
      FROM charter.send_email_tasks AS t
     WHERE t.id = p_send_email_task_id
       AND t.org_id = charter._email_task_org(p_send_email_task_id, p_org_id)
$$;

-- What the app calls: the message, its root task and the kickoff, in one transaction.
CREATE OR REPLACE FUNCTION charter.send_email(
    p_org_id text, p_to text, p_subject text, p_body text, p_max_attempts integer DEFAULT 2,
    p_scheduled_at timestamptz DEFAULT now(), p_recheck_after interval DEFAULT '5 seconds')
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org     text := charter._acting_org(p_org_id);
    v_message bigint;
    v_task    bigint;
BEGIN
    IF p_to IS NULL OR p_to !~ '^[^@\s]+@[^@\s]+$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = format('%L is not an email address', p_to),
            HINT = 'Pass one address, e.g. "ana@example.com".';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 20 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('max_attempts must be between 1 and 20, not %s', p_max_attempts),
            HINT = 'Seed 003''s example allows one retry: max_attempts=2.';
    END IF;
    IF p_recheck_after IS NULL OR p_recheck_after <= interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = 'recheck_after must be a positive interval',
            HINT = 'How long the supervisor waits before it looks at the facts again, e.g. 5 seconds.';
    END IF;
    INSERT INTO charter.email_messages (org_id, recipient, subject, body)
    VALUES (v_org, p_to, coalesce(p_subject, ''), coalesce(p_body, '')) RETURNING id INTO v_message;
    -- Sending gives up a day after it was due (not after it was asked for).
    INSERT INTO charter.send_email_tasks (org_id, email_message_id, max_attempts, recheck_after, give_up_at)
    VALUES (v_org, v_message, p_max_attempts, p_recheck_after, coalesce(p_scheduled_at, now()) + interval '1 day')
    RETURNING id INTO v_task;
    PERFORM charter.kickoff_send_email_task(v_task, p_scheduled_at, v_org);
    RETURN v_task;
END;
$$;

-- A send's facts, for the app: where it stands and every attempt.
CREATE OR REPLACE FUNCTION charter.send_email_status(p_org_id text, p_send_email_task_id bigint)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', t.id, 'to', m.recipient, 'subject', m.subject, 'maxAttempts', t.max_attempts,
        'state', CASE WHEN s.send_email_task_id IS NOT NULL THEN 'succeeded'
                      WHEN (SELECT count(*) FROM charter.send_email_task_failed AS f
                             WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id) >= t.max_attempts THEN 'failed'
                      WHEN now() >= t.give_up_at THEN 'gave_up'
                      ELSE 'sending' END,
        'scheduled', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', f.attempt, 'taskId', f.task_id,
                                                                   'at', f.created_at) ORDER BY f.attempt), '[]')
                        FROM charter.send_email_task_scheduled AS f WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id),
        'failures', (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', f.attempt, 'error', f.error,
                                                                  'at', f.created_at) ORDER BY f.attempt), '[]')
                       FROM charter.send_email_task_failed AS f WHERE f.send_email_task_id = t.id AND f.org_id = t.org_id),
        'succeeded', CASE WHEN s.send_email_task_id IS NOT NULL THEN
                         jsonb_build_object('attempt', s.attempt, 'at', s.created_at, 'response', s.provider_response) END)
      FROM charter.send_email_tasks AS t
      JOIN charter.email_messages AS m ON m.id = t.email_message_id AND m.org_id = t.org_id
      LEFT JOIN charter.send_email_task_succeeded AS s
        ON s.send_email_task_id = t.id AND s.org_id = t.org_id
     WHERE t.org_id = charter._acting_org(p_org_id) AND t.id = p_send_email_task_id
$$;
