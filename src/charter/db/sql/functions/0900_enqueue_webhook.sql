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
