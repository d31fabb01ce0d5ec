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
           AND charter._claim_type(x.effect_type, x.request) = ANY (p_effect_types)
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
           AND charter._claim_type(x.effect_type, x.request) = ANY (p_effect_types)
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
