-- confirm_side_effect for a row already read (finish_side_effect has it): written by its
-- whole key, so in its own partition.
CREATE OR REPLACE FUNCTION charter._confirm_effect(p_effect charter.side_effects, p_response jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_effect charter.side_effects;
BEGIN
    -- Delivered: through processing (the state machine's only way to completed).
    UPDATE charter.side_effects AS x SET status = 'processing', attempts = x.attempts + 1
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
       AND x.status IN ('pending', 'failed');
    UPDATE charter.side_effects AS x
       SET status = 'completed', completed_at = now(), response = p_response
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
       AND x.status = 'processing'
    RETURNING * INTO v_effect;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- The wait of this effect only (a re-driven effect may outlive its node's round). What
    -- the receiver said in its body stays with the effect, for admins: not in the instance.
    UPDATE charter.instance_waits AS w
       SET resume = jsonb_build_object('delivery', jsonb_build_object('effectId', v_effect.id,
                                                                      'response', p_response - 'body')),
           due_at = now()
     WHERE w.run_id = v_effect.run_id AND w.org_id = v_effect.org_id AND w.node_id = v_effect.node_id AND w.kind = 'delivery'
       AND w.detail->>'idempotencyKey' = v_effect.idempotency_key;
    PERFORM pg_notify('charter_events', v_effect.org_id);
    RETURN true;
END;
$$;
