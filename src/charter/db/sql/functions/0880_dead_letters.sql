-- The side-effects dead letter queue: list (all, or one run's), show, re-drive (same
-- idempotency key, fresh attempts; a workflow's failed instance resumes at the node), drop
-- (kept as cancelled, with who dropped it). Effects only: a task that ran out is its
-- supervisor's business.

CREATE OR REPLACE FUNCTION charter.list_dead_letters(
    p_org_id text, p_limit integer DEFAULT 100, p_run_id text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT charter._side_effect_json(x) FROM charter.side_effects AS x
     WHERE x.org_id = charter._acting_org(p_org_id) AND x.status = 'dead_letter' AND x.kind = 'effect'
       AND (p_run_id IS NULL OR x.run_id = p_run_id)
     ORDER BY x.completed_at DESC, x.id DESC
     LIMIT greatest(1, least(coalesce(p_limit, 100), 10000))
$$;

CREATE OR REPLACE FUNCTION charter._dead_letters_for_update(p_org_id text, p_ids bigint[])
RETURNS SETOF charter.side_effects
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_missing bigint;
BEGIN
    SELECT i INTO v_missing FROM unnest(p_ids) AS i
     WHERE NOT EXISTS (SELECT 1 FROM charter.side_effects AS x
                        WHERE x.org_id = p_org_id AND x.id = i AND x.status = 'dead_letter'
                          AND x.kind = 'effect')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'CH061',
            MESSAGE = format('Side effect %s is not a dead letter of org %L', v_missing, p_org_id),
            HINT = 'charter dlq list shows the dead letters; nothing was changed.';
    END IF;
    RETURN QUERY SELECT * FROM charter.side_effects AS x
                  WHERE x.org_id = p_org_id AND x.id = ANY (p_ids) ORDER BY x.id FOR UPDATE;
END;
$$;

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

CREATE OR REPLACE FUNCTION charter.drop_side_effects(p_org_id text, p_ids bigint[], p_actor text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org  text := charter._acting_org(p_org_id);
    v_done bigint[];
BEGIN
    IF coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN '{}';
    END IF;
    PERFORM charter._dead_letters_for_update(v_org, p_ids);
    WITH dropped AS (
        UPDATE charter.side_effects AS x
           SET status = 'cancelled',
               interventions = x.interventions || jsonb_build_object(
                   'action', 'drop', 'by', p_actor, 'at', now(), 'lastError', x.error, 'attempts', x.attempts)
         WHERE x.org_id = v_org AND x.id = ANY (p_ids) AND x.status = 'dead_letter'
        RETURNING x.id
    )
    SELECT coalesce(array_agg(d.id ORDER BY d.id), '{}') INTO v_done FROM dropped AS d;
    RETURN v_done;
END;
$$;
