-- Sends the effect again (a dead letter, or one an admin dropped, back to pending with its
-- key and fresh attempts, the intervention recorded), and has its instance take it up: a
-- failed instance resumes at the node (_redrive_instance) unless its document has another
-- active instance now; a running one whose wait took the dead letter but has not fired yet
-- waits again. p_via names the call ('dead_letters.retry' or 'retry_run'). Returns whether
-- the instance resumed.
CREATE OR REPLACE FUNCTION charter._redrive_effect(p_effect charter.side_effects, p_actor text, p_via text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_instance charter.workflow_instances;
BEGIN
    IF p_effect.status IN ('dead_letter', 'cancelled') THEN
        -- A dropped effect is final but for this recorded admin call (retry_run).
        PERFORM set_config('charter.admin_override', CASE WHEN p_effect.status = 'cancelled' THEN 'on' ELSE '' END, true);
        UPDATE charter.side_effects AS x
           SET status = 'pending', attempts = 0, next_retry_at = now(), completed_at = NULL, worker_id = NULL,
               interventions = x.interventions || jsonb_build_object(
                   'action', 'retry', 'by', p_actor, 'at', now(), 'lastError', x.error, 'attempts', x.attempts,
                   'via', p_via)
         WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id
        RETURNING * INTO p_effect;
        PERFORM set_config('charter.admin_override', '', true);
    END IF;
    IF p_effect.run_id IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO v_instance FROM charter.workflow_instances AS i
     WHERE i.id = p_effect.run_id AND i.org_id = p_effect.org_id;
    IF v_instance.status IN ('running', 'paused') THEN
        UPDATE charter.instance_waits AS w SET resume = NULL, due_at = NULL
         WHERE w.run_id = p_effect.run_id AND w.org_id = p_effect.org_id AND w.node_id = p_effect.node_id
           AND w.kind = 'delivery' AND w.detail->>'idempotencyKey' = p_effect.idempotency_key
           AND w.resume ? 'failed';
        RETURN false;
    END IF;
    IF NOT coalesce(charter._failed_on_effect(v_instance, p_effect), false)
       OR EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                   WHERE i.org_id = v_instance.org_id AND i.document_id = v_instance.document_id
                     AND i.status IN ('running', 'paused')) THEN
        RETURN false;  -- it ended otherwise, or the document moved on: delivered, nothing resumes
    END IF;
    PERFORM charter._redrive_instance(v_instance, p_effect, p_actor, p_via);
    RETURN true;
END;
$$;
