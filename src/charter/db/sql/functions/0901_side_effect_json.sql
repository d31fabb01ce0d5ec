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
