-- A failed attempt that may pass later: the effect is tried again at p_at — unless it belongs
-- to a document's workflow instance that is no longer active (cancelled, or ended otherwise:
-- then it is cancelled, never sent again), or one that is paused (then it waits, due at
-- infinity, for resume_instance). The instance is read under its document's lock, which
-- cancel and pause hold while they withdraw its effects: one that was being sent while they
-- ran is decided here by what they did. Returns 'retry', 'held' or 'cancelled'.
CREATE OR REPLACE FUNCTION charter._retry_side_effect(p_effect charter.side_effects, p_outcome jsonb, p_at timestamptz)
RETURNS text
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_document text;
    v_status   text;
BEGIN
    IF p_effect.run_id IS NOT NULL THEN
        SELECT i.document_id INTO v_document FROM charter.workflow_instances AS i
         WHERE i.id = p_effect.run_id AND i.org_id = p_effect.org_id;
    END IF;
    IF v_document IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(charter._lock_key('document', p_effect.org_id || '/' || v_document));
        SELECT i.status INTO v_status FROM charter.workflow_instances AS i
         WHERE i.id = p_effect.run_id AND i.org_id = p_effect.org_id;
    END IF;
    IF v_status IS NOT NULL AND v_status NOT IN ('running', 'paused') THEN
        UPDATE charter.side_effects AS x
           SET status = 'cancelled', completed_at = now(), error = p_outcome->>'error', response = p_outcome->'response'
         WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id;
        RETURN 'cancelled';
    END IF;
    UPDATE charter.side_effects AS x
       SET status = 'failed', error = p_outcome->>'error', response = p_outcome->'response',
           next_retry_at = CASE WHEN v_status = 'paused' THEN 'infinity' ELSE p_at END
     WHERE x.created_at = p_effect.created_at AND x.id = p_effect.id AND x.org_id = p_effect.org_id;
    RETURN CASE WHEN v_status = 'paused' THEN 'held' ELSE 'retry' END;
END;
$$;
