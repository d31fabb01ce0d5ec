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
