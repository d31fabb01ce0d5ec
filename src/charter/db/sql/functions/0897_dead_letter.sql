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
