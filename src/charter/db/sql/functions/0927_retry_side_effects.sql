-- Re-drives dead letters: pending again with their idempotency key and a fresh set of
-- attempts. A workflow's effect whose instance failed because of it (DELIVERY_FAILED) takes
-- its instance up again: it resumes at the node, which completes once the effect is
-- delivered (_redrive_effect). The documents' locks come first (sorted), then the rows, the
-- order finish_side_effect and retry_run take them in: re-drives and retries of one effect
-- at once re-drive it once, and the others are refused (not a dead letter; not failed).
CREATE OR REPLACE FUNCTION charter.retry_side_effects(p_org_id text, p_ids bigint[], p_actor text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_done   bigint[] := '{}';
    v_lock   text;
    v_effect charter.side_effects;
BEGIN
    IF coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN '{}';
    END IF;
    FOR v_lock IN SELECT DISTINCT i.document_id FROM charter.side_effects AS x
                    JOIN charter.workflow_instances AS i ON i.id = x.run_id AND i.org_id = x.org_id
                   WHERE x.org_id = v_org AND x.id = ANY (p_ids)
                   ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(charter._lock_key('document', v_org || '/' || v_lock));
    END LOOP;
    FOR v_effect IN SELECT * FROM charter._dead_letters_for_update(v_org, p_ids) LOOP
        PERFORM charter._redrive_effect(v_effect, p_actor, 'dead_letters.retry');
        v_done := v_done || v_effect.id;
    END LOOP;
    PERFORM pg_notify('charter_events', v_org);
    RETURN v_done;
END;
$$;
