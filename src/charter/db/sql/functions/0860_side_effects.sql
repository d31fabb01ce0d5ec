-- Delivering the side-effects outbox, which is also seed 003's task queue (WF-10, WF-11):
-- rows are claimed like events (SKIP LOCKED, processing with a lease, fenced by the worker
-- id) and answered once. An effect delivered → completed and its node resumes; a failure →
-- retried with backoff (at least the receiver's Retry-After) or, out of attempts or refused
-- for good, dead_letter — and the node follows its `failed` edge or fails the instance
-- (DELIVERY_FAILED). A task is run once and completed whatever happened: its supervisor
-- decides from the facts its handlers recorded.

-- An org's webhook secret (HMAC-SHA256 key of the signature header), made on first use.
CREATE OR REPLACE FUNCTION charter.webhook_secret(p_org_id text)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_secret text;
BEGIN
    INSERT INTO charter.org_secrets (org_id, webhook_secret)
    VALUES (v_org, encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text
                                            || clock_timestamp()::text, 'UTF8')), 'hex'))
    ON CONFLICT (org_id) DO NOTHING;
    SELECT s.webhook_secret INTO v_secret FROM charter.org_secrets AS s WHERE s.org_id = v_org;
    RETURN v_secret;
END;
$$;

-- What a worker names to claim a row: its type, and a notification's channel with it
-- ('notification:email'), so a worker takes only what it can send.
CREATE OR REPLACE FUNCTION charter._claim_type(p_effect charter.side_effects)
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT CASE WHEN p_effect.effect_type = 'notification'
                THEN 'notification:' || coalesce(p_effect.request->>'channel', 'email')
                ELSE p_effect.effect_type END
$$;

-- Claims up to p_limit due rows of the given types, one org at a time: it goes round the
-- orgs with open rows (_orgs_in_turn) and takes what it can from each.
CREATE OR REPLACE FUNCTION charter.claim_side_effects(
    p_worker_id text, p_effect_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans),
-- here and in the helpers it calls, which have no SET clause of their own.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_org     text;
    v_left    integer := p_limit;
    v_claimed integer;
BEGIN
    FOR v_org IN SELECT o.org FROM charter._orgs_in_turn('side_effects', NULL, p_limit) AS o(org) LOOP
        EXIT WHEN v_left <= 0;
        RETURN QUERY SELECT * FROM charter._claim_side_effects_of_org(
            v_org, p_worker_id, p_effect_types, v_left, p_lease_seconds);
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
        PERFORM charter._took_turn('side_effects', v_org);
    END LOOP;
END;
$$;

-- One org's claim: its due rows of the given types, in the order they fell due.
CREATE OR REPLACE FUNCTION charter._claim_side_effects_of_org(
    p_org text, p_worker_id text, p_effect_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE plpgsql
AS $$  -- no SET clause: it runs with claim_side_effects's settings
DECLARE
    v_stuck charter.side_effects;
    v_error text;
BEGIN
    -- A row whose workers stopped answering on every attempt it had is a dead letter: a
    -- poison message must not take one worker after another down.
    FOR v_stuck IN
        SELECT * FROM charter.side_effects AS x
         WHERE x.org_id = p_org AND x.status = 'processing' AND x.next_retry_at <= now()
           AND x.attempts >= x.max_attempts
           AND charter._claim_type(x) = ANY (p_effect_types)
         FOR UPDATE SKIP LOCKED
    LOOP
        v_error := format('worker %s stopped answering during attempt %s of %s (its lease ran out)',
                          v_stuck.worker_id, v_stuck.attempts, v_stuck.max_attempts);
        PERFORM charter._dead_letter(v_stuck, v_error, v_stuck.response);
        -- A task's error handler still records the failure as a fact, so its supervisor
        -- sees the attempt end.
        IF v_stuck.kind = 'task' AND charter._worker_may_run(v_stuck.request->>'error_handler') THEN
            PERFORM charter.run_function(v_stuck.request->>'error_handler',
                                         jsonb_build_object('original_payload', v_stuck.request, 'error', v_error),
                                         v_stuck.org_id);
        END IF;
    END LOOP;
    RETURN QUERY
    WITH claimed AS (
        SELECT x.created_at, x.id FROM charter.side_effects AS x
         WHERE x.org_id = p_org AND x.status IN ('pending', 'processing', 'failed')
           AND x.next_retry_at <= now()
           AND charter._claim_type(x) = ANY (p_effect_types)
           AND (x.status <> 'processing' OR x.attempts < x.max_attempts)
         ORDER BY x.next_retry_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    ), taken AS (
        UPDATE charter.side_effects AS x
           SET status = 'processing', attempts = x.attempts + 1, worker_id = p_worker_id,
               dequeued_at = now(), next_retry_at = now() + make_interval(secs => p_lease_seconds)
          FROM claimed AS c WHERE x.created_at = c.created_at AND x.id = c.id AND x.org_id = p_org
        RETURNING x.*
    )
    SELECT jsonb_build_object('id', t.id, 'orgId', t.org_id, 'createdAt', t.created_at, 'kind', t.kind, 'effectType', t.effect_type,
                              'request', t.request, 'idempotencyKey', t.idempotency_key, 'attempt', t.attempts,
                              'maxAttempts', t.max_attempts, 'runId', t.run_id, 'node', t.node_id,
                              'traceId', t.trace_id, 'progress', coalesce(t.response->'delivered', '[]'::jsonb),
                              'secret', CASE WHEN t.effect_type = 'webhook'
                                             THEN charter.webhook_secret(t.org_id) END)
      FROM taken AS t;
END;
$$;

-- Seed 003's dequeue: the next due row of the queue for this worker (NULL when none), of
-- the given types (all by default).
CREATE OR REPLACE FUNCTION charter.dequeue_next_available_task(
    p_worker_id text, p_lease_seconds integer DEFAULT 60, p_task_types text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT c FROM charter.claim_side_effects(
        p_worker_id,
        coalesce(p_task_types, ARRAY['db_function', 'email', 'sms', 'webhook', 'notification:email',
                                     'notification:sms', 'notification:in_app']),
        1, p_lease_seconds) AS c
$$;

-- An effect out of attempts (or refused for good): dead_letter, and the node that waits for
-- it follows its failure path. The receiver's response body stays with the effect (shown to
-- admins), never in the instance.
CREATE OR REPLACE FUNCTION charter._dead_letter(p_effect charter.side_effects, p_error text, p_response jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    UPDATE charter.side_effects AS x
       SET status = 'dead_letter', error = p_error, response = p_response, completed_at = now()
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id;
    IF p_effect.run_id IS NOT NULL THEN
        UPDATE charter.instance_waits AS w
           SET resume = jsonb_build_object('failed', jsonb_build_object(
                   'effectId', p_effect.id, 'error', p_error, 'attempts', p_effect.attempts,
                   'response', p_response - 'body')),
               due_at = now()
         WHERE w.run_id = p_effect.run_id AND w.org_id = p_effect.org_id AND w.node_id = p_effect.node_id AND w.kind = 'delivery'
           AND w.detail->>'idempotencyKey' = p_effect.idempotency_key;
        PERFORM pg_notify('charter_events', p_effect.org_id);
    END IF;
END;
$$;

-- An attempt's end, from the worker that holds it ('stale' otherwise). p_outcome:
-- {"ok": true, "response": {...}} or {"ok": false, "retry": bool, "retryAfter": seconds,
-- "error": "...", "response": {...}}; a notification's response may list the recipients
-- already reached ("delivered"), which the next attempt skips. An effect of a workflow
-- instance cancelled meanwhile is not tried again (cancelled), and one of a paused instance
-- waits for its resume (_retry_side_effect).
-- A worker's answer for a row it claimed. p_org_id and p_created_at are the rest of the
-- row's key, as the claim gave them: with both, the row is read in its own monthly partition
-- (and, distributed, on its org's node); without, it is looked up by id in every partition.
CREATE OR REPLACE FUNCTION charter.finish_side_effect(
    p_effect_id bigint, p_worker_id text, p_outcome jsonb, p_org_id text DEFAULT NULL,
    p_created_at timestamptz DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
-- A hot path: plans made once per session and reading by key (docs/architecture.md, Plans).
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_org      text := charter._effect_org(p_effect_id, p_org_id);
    v_effect   charter.side_effects;
    v_delay    double precision;
    v_document text;
BEGIN
    -- An instance's effect: its document's lock first, as cancel, pause and the engine take
    -- it before they touch the instance's effects (one lock order, no deadlock with them).
    IF p_created_at IS NOT NULL THEN  -- apart, so the generic plan prunes to one partition
        SELECT i.document_id INTO v_document
          FROM charter.side_effects AS x
          JOIN charter.workflow_instances AS i ON i.id = x.run_id AND i.org_id = x.org_id
         WHERE x.created_at = p_created_at AND x.id = p_effect_id AND x.org_id = v_org;
    ELSE
        SELECT i.document_id INTO v_document
          FROM charter.side_effects AS x
          JOIN charter.workflow_instances AS i ON i.id = x.run_id AND i.org_id = x.org_id
         WHERE x.id = p_effect_id AND x.org_id = v_org;
    END IF;
    IF v_document IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_org || '/' || v_document));
    END IF;
    IF p_created_at IS NOT NULL THEN
        SELECT * INTO v_effect FROM charter.side_effects AS x
         WHERE x.created_at = p_created_at AND x.id = p_effect_id AND x.org_id = v_org
           AND x.status = 'processing' AND x.worker_id = p_worker_id
           FOR UPDATE;
    ELSE
        SELECT * INTO v_effect FROM charter.side_effects AS x
         WHERE x.id = p_effect_id AND x.org_id = v_org AND x.status = 'processing' AND x.worker_id = p_worker_id
           FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF v_effect.kind = 'task' AND NOT (coalesce((p_outcome->>'retry')::boolean, false)
                                       AND v_effect.attempts < v_effect.max_attempts) THEN
        -- Run once: what came of it is in the facts its handlers recorded (and task_errors).
        -- Only an operational error (a function's "error", not a validation failure) is
        -- tried again, a few times, before the task is a dead letter.
        IF coalesce((p_outcome->>'retry')::boolean, false) THEN
            PERFORM charter._dead_letter(v_effect, p_outcome->>'error', p_outcome);
            RETURN 'dead_letter';
        END IF;
        UPDATE charter.side_effects AS x
           SET status = 'completed', completed_at = now(), response = p_outcome,
               error = CASE WHEN (p_outcome->>'ok')::boolean THEN NULL ELSE p_outcome->>'error' END
         WHERE x.created_at = v_effect.created_at AND x.id = v_effect.id AND x.org_id = v_effect.org_id;
        RETURN 'done';
    END IF;
    IF (p_outcome->>'ok')::boolean THEN
        PERFORM charter._confirm_effect(v_effect, coalesce(p_outcome->'response', '{}'::jsonb));
        RETURN 'delivered';
    END IF;
    IF coalesce((p_outcome->>'retry')::boolean, false) AND v_effect.attempts < v_effect.max_attempts THEN
        v_delay := greatest(coalesce((p_outcome->>'retryAfter')::double precision, 0),
                            least(300, 0.5 * power(2, v_effect.attempts - 1)) * (0.75 + random() * 0.5));
        RETURN charter._retry_side_effect(v_effect, p_outcome, now() + make_interval(secs => v_delay));
    END IF;
    PERFORM charter._dead_letter(v_effect, p_outcome->>'error', p_outcome->'response');
    RETURN 'dead_letter';
END;
$$;

-- Headers a webhook may carry: printable ASCII, and none of those charter sets itself.
CREATE OR REPLACE FUNCTION charter._check_webhook_headers(p_headers jsonb)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_name  text;
    v_value jsonb;
BEGIN
    IF jsonb_typeof(coalesce(p_headers, '{}'::jsonb)) <> 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060', MESSAGE = 'Webhook headers must be an object of names to values',
            HINT = 'Pass headers={"X-Name": "value"}.';
    END IF;
    FOR v_name, v_value IN SELECT * FROM jsonb_each(coalesce(p_headers, '{}'::jsonb)) LOOP
        IF lower(v_name) IN ('content-type', 'content-length', 'idempotency-key', 'host')
           OR lower(v_name) LIKE 'x-charter-%' THEN
            RAISE EXCEPTION USING ERRCODE = 'CH060',
                MESSAGE = format('Webhook header %s is set by charter', v_name),
                HINT = 'Leave it out: charter sends Content-Type, Idempotency-Key and the X-Charter-* headers itself.';
        END IF;
        IF v_name !~ '^[!#$%&''*+.^_`|~0-9A-Za-z-]+$' OR (v_value #>> '{}') !~ '^[ -~]*$' THEN
            RAISE EXCEPTION USING ERRCODE = 'CH060',
                MESSAGE = format('Webhook header %L: %L is not a valid HTTP header', v_name, v_value #>> '{}'),
                HINT = 'Header names are tokens; values printable ASCII without line breaks.';
        END IF;
    END LOOP;
END;
$$;

-- A webhook the app sends (outside a document's workflow), through the same outbox: signed,
-- keyed, retried, dead-lettered. The same idempotency key twice is one effect.
CREATE OR REPLACE FUNCTION charter.enqueue_webhook(
    p_org_id text, p_url text, p_body jsonb, p_method text DEFAULT 'POST', p_headers jsonb DEFAULT '{}',
    p_idempotency_key text DEFAULT NULL, p_max_attempts integer DEFAULT 8)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
    v_key text := coalesce(p_idempotency_key, gen_random_uuid()::text);
    v_id  bigint;
BEGIN
    IF p_url IS NULL OR p_url !~ '^https?://[^/]' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('A webhook needs an http:// or https:// URL, not %L', p_url),
            HINT = 'Pass the receiver''s full URL, e.g. https://example.com/hooks/charter.';
    END IF;
    IF upper(p_method) NOT IN ('POST', 'PUT', 'PATCH') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('A webhook is sent with POST, PUT or PATCH, not %L', p_method),
            HINT = 'Use method="POST" (the default), "PUT" or "PATCH".';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 50 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH060',
            MESSAGE = format('max_attempts must be between 1 and 50, not %s', p_max_attempts),
            HINT = 'The default, 8, retries for about two minutes with backoff.';
    END IF;
    PERFORM charter._check_webhook_headers(p_headers);
    INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key)
    VALUES (v_org, 'side_effects', 'app:' || v_key) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        SELECT x.id INTO v_id FROM charter.side_effects AS x
         WHERE x.org_id = v_org AND x.idempotency_key = v_key AND x.run_id IS NULL AND x.effect_type = 'webhook'
         ORDER BY x.created_at DESC LIMIT 1;
        RETURN jsonb_build_object('id', v_id, 'status', 'duplicate', 'idempotencyKey', v_key);
    END IF;
    INSERT INTO charter.side_effects (org_id, effect_type, request, idempotency_key, max_attempts)
    VALUES (v_org, 'webhook',
            jsonb_build_object('url', p_url, 'method', upper(p_method), 'headers', coalesce(p_headers, '{}'::jsonb),
                               'body', coalesce(p_body, '{}'::jsonb)),
            v_key, p_max_attempts)
    RETURNING id INTO v_id;
    PERFORM pg_notify('charter_events', v_org);
    RETURN jsonb_build_object('id', v_id, 'status', 'queued', 'idempotencyKey', v_key);
END;
$$;

-- An effect as the client shows it.
CREATE OR REPLACE FUNCTION charter._side_effect_json(p_effect charter.side_effects)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object(
        'id', p_effect.id, 'kind', p_effect.kind,
        'channel', CASE WHEN p_effect.effect_type = 'notification'
                        THEN coalesce(p_effect.request->>'channel', 'email') ELSE p_effect.effect_type END,
        'target', CASE p_effect.effect_type
                      WHEN 'webhook' THEN p_effect.request->>'url'
                      WHEN 'notification' THEN p_effect.request->>'to'
                      WHEN 'db_function' THEN p_effect.request->>'db_function'
                      ELSE coalesce(p_effect.request->>'to', p_effect.request->>'db_function', '') END,
        'status', p_effect.status, 'attempts', p_effect.attempts, 'maxAttempts', p_effect.max_attempts,
        'error', p_effect.error, 'idempotencyKey', p_effect.idempotency_key,
        'runId', p_effect.run_id, 'node', p_effect.node_id,
        'request', p_effect.request, 'response', p_effect.response, 'interventions', p_effect.interventions,
        'createdAt', p_effect.created_at, 'completedAt', p_effect.completed_at,
        'nextAttemptAt', CASE WHEN p_effect.status IN ('pending', 'failed') THEN p_effect.next_retry_at END)
$$;

-- One effect of the org (the org's own only).
CREATE OR REPLACE FUNCTION charter.get_side_effect(p_org_id text, p_id bigint)
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._side_effect_json(x) FROM charter.side_effects AS x
     WHERE x.org_id = charter._acting_org(p_org_id) AND x.id = p_id
$$;

-- Keeps the rows a worker is still sending its own (a slow receiver must not let another
-- worker send them again); returns the ids still held. p_org_ids gives each row's org, as the
-- claim gave it (looked up by id when null).
CREATE OR REPLACE FUNCTION charter.extend_side_effect_leases(
    p_worker_id text, p_ids bigint[], p_lease_seconds integer, p_org_ids text[] DEFAULT NULL)
RETURNS bigint[]
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH held AS (
        UPDATE charter.side_effects AS x SET next_retry_at = now() + make_interval(secs => p_lease_seconds)
          FROM unnest(p_ids, p_org_ids) AS u(id, org_id)
         WHERE x.id = u.id AND x.org_id = charter._effect_org(u.id, u.org_id)
           AND x.status = 'processing' AND x.worker_id = p_worker_id
        RETURNING x.id
    )
    SELECT coalesce(array_agg(h.id ORDER BY h.id), '{}') FROM held AS h
$$;
