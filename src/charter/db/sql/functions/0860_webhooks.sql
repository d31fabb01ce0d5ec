-- Delivering webhooks from the side-effects outbox (WF-10, seed 003 channels): claimed like
-- events (SKIP LOCKED, processing with a lease), answered once: delivered → completed and
-- the node resumes; a failure → retried with backoff (at least the receiver's Retry-After)
-- or, out of attempts or refused for good, dead_letter — and the node follows its
-- `failed` edge or fails the instance (DELIVERY_FAILED).

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

CREATE OR REPLACE FUNCTION charter.claim_side_effects(
    p_worker_id text, p_effect_types text[], p_limit integer, p_lease_seconds integer)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH claimed AS (
        SELECT x.created_at, x.id FROM charter.side_effects AS x
         WHERE x.status IN ('pending', 'processing', 'failed') AND x.next_retry_at <= now()
           AND x.effect_type = ANY (p_effect_types)
         ORDER BY x.next_retry_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    ), taken AS (
        UPDATE charter.side_effects AS x
           SET status = 'processing', attempts = x.attempts + 1, worker_id = p_worker_id,
               next_retry_at = now() + make_interval(secs => p_lease_seconds)
          FROM claimed AS c WHERE x.created_at = c.created_at AND x.id = c.id
        RETURNING x.*
    )
    SELECT jsonb_build_object('id', t.id, 'orgId', t.org_id, 'effectType', t.effect_type, 'request', t.request,
                              'idempotencyKey', t.idempotency_key, 'attempt', t.attempts,
                              'maxAttempts', t.max_attempts, 'runId', t.run_id, 'node', t.node_id,
                              'traceId', t.trace_id,
                              'secret', CASE WHEN t.effect_type = 'webhook' THEN charter.webhook_secret(t.org_id) END)
      FROM taken AS t
$$;

-- A delivery attempt's end, from the worker that holds it ('stale' otherwise). p_outcome:
-- {"ok": true, "response": {...}} or {"ok": false, "retry": bool, "retryAfter": seconds,
-- "error": "...", "response": {...}}.
CREATE OR REPLACE FUNCTION charter.finish_side_effect(p_effect_id bigint, p_worker_id text, p_outcome jsonb)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_effect charter.side_effects;
    v_delay  double precision;
BEGIN
    SELECT * INTO v_effect FROM charter.side_effects AS x
     WHERE x.id = p_effect_id AND x.status = 'processing' AND x.worker_id = p_worker_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF (p_outcome->>'ok')::boolean THEN
        PERFORM charter.confirm_side_effect(p_effect_id, coalesce(p_outcome->'response', '{}'::jsonb));
        RETURN 'delivered';
    END IF;
    IF coalesce((p_outcome->>'retry')::boolean, false) AND v_effect.attempts < v_effect.max_attempts THEN
        v_delay := greatest(coalesce((p_outcome->>'retryAfter')::double precision, 0),
                            least(300, 0.5 * power(2, v_effect.attempts - 1)) * (0.75 + random() * 0.5));
        UPDATE charter.side_effects
           SET status = 'failed', error = p_outcome->>'error', response = p_outcome->'response',
               next_retry_at = now() + make_interval(secs => v_delay)
         WHERE id = p_effect_id;
        RETURN 'retry';
    END IF;
    UPDATE charter.side_effects
       SET status = 'dead_letter', error = p_outcome->>'error', response = p_outcome->'response', completed_at = now()
     WHERE id = p_effect_id;
    UPDATE charter.instance_waits AS w
       SET resume = jsonb_build_object('failed', jsonb_build_object(
               'effectId', p_effect_id, 'error', p_outcome->>'error', 'attempts', v_effect.attempts,
               'response', p_outcome->'response')),
           due_at = now()
     WHERE w.run_id = v_effect.run_id AND w.node_id = v_effect.node_id AND w.kind = 'delivery';
    PERFORM pg_notify('charter_events', v_effect.org_id);
    RETURN 'dead_letter';
END;
$$;
