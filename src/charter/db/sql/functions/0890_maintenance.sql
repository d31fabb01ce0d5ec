-- Retention (seed 002 § Partition Strategy, § Receipts Pruning): what is older than the
-- window is forgotten, never what a running instance or an undelivered effect still needs.
--   * receipts: step receipts of runs completed or cancelled before the cutoff; outbox
--     receipts written before it (dedup holds for every key inside the window);
--   * delivered (completed or dropped) outbox rows finished before the cutoff;
--   * monthly partitions of evidence and outboxes that ended before the cutoff, detached and
--     dropped whole — unless one still holds a row of a run not finished before the cutoff,
--     or an outbox row not delivered (dead letters are kept until dropped), which is reported.
-- One maintenance at a time (an advisory lock); returns a report.
-- Only the schema's owner may keep less than the deduplication window (90 days: an
-- idempotency key used inside it is still a duplicate); the worker role, which runs this
-- hourly, is refused with PERMISSION_DENIED rather than let a setting forget keys early.
CREATE OR REPLACE FUNCTION charter.run_maintenance(p_retention_days integer DEFAULT 90)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_cutoff     timestamptz;
    v_steps      bigint;
    v_outbox     bigint;
    v_effects    bigint;
    v_events     bigint;
    v_part       record;
    v_busy       boolean;
    v_dropped    jsonb := '[]';
    v_kept       jsonb := '[]';
BEGIN
    IF p_retention_days IS NULL OR p_retention_days < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('Retention must be at least 1 day, not %s', p_retention_days),
            HINT = 'The default keeps 90 days.';
    END IF;
    IF p_retention_days < 90 AND NOT (
           SELECT pg_has_role(session_user, n.nspowner, 'MEMBER')
             FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'charter') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH085',
            MESSAGE = format('Role %s may not keep %s days: retention below the 90-day deduplication window '
                             'is for the owner of schema charter only', session_user, p_retention_days),
            HINT = 'Keep 90 days or more (CHARTER_RETENTION_DAYS), or have the owner of schema charter run charter maintenance to keep fewer.';
    END IF;
    IF NOT pg_try_advisory_xact_lock(charter._lock_key('maintenance', 'retention')) THEN
        RETURN jsonb_build_object('skipped', 'another maintenance is running');
    END IF;
    v_cutoff := now() - make_interval(days => p_retention_days);
    PERFORM set_config('charter.retention', 'on', true);

    DELETE FROM charter.step_receipts AS r USING charter.runs AS u
     WHERE u.id = r.run_id AND u.org_id = r.org_id AND u.status IN ('completed', 'cancelled')
       AND u.finished_at < v_cutoff;
    GET DIAGNOSTICS v_steps = ROW_COUNT;
    DELETE FROM charter.outbox_receipts AS r WHERE r.created_at < v_cutoff;
    GET DIAGNOSTICS v_outbox = ROW_COUNT;
    DELETE FROM charter.side_effects AS x
     WHERE x.status IN ('completed', 'cancelled') AND x.completed_at < v_cutoff;
    GET DIAGNOSTICS v_effects = ROW_COUNT;
    DELETE FROM charter.document_events AS e WHERE e.status = 'completed' AND e.completed_at < v_cutoff;
    GET DIAGNOSTICS v_events = ROW_COUNT;

    FOR v_part IN
        SELECT parent.relname AS parent, child.relname AS name,
               (to_date(right(child.relname, 7), 'YYYY_MM') + interval '1 month') AT TIME ZONE 'UTC' AS ends
          FROM pg_catalog.pg_inherits AS i
          JOIN pg_catalog.pg_class AS child ON child.oid = i.inhrelid
          JOIN pg_catalog.pg_class AS parent ON parent.oid = i.inhparent
          JOIN pg_catalog.pg_namespace AS n ON n.oid = parent.relnamespace
         WHERE n.nspname = 'charter' AND parent.relname IN ('step_executions', 'document_events', 'side_effects')
           AND child.relname ~ '_\d{4}_\d{2}$'
         ORDER BY 2
    LOOP
        CONTINUE WHEN v_part.ends > v_cutoff;
        IF v_part.parent = 'step_executions' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p LEFT JOIN charter.runs AS u
                                                      ON u.id = p.run_id AND u.org_id = p.org_id
                             WHERE u.id IS NOT NULL AND (u.status NOT IN (''completed'', ''cancelled'')
                                                         OR u.finished_at >= %L))', v_part.name, v_cutoff)
               INTO v_busy;
        ELSE
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p WHERE p.status NOT IN (''completed'', ''cancelled''))',
                           v_part.name)
               INTO v_busy;
        END IF;
        IF v_busy THEN
            v_kept := v_kept || jsonb_build_object('partition', v_part.name, 'reason',
                CASE WHEN v_part.parent = 'step_executions' THEN 'holds evidence of a run not finished before the cutoff'
                     ELSE 'holds rows not delivered (pending, failing or dead letters)' END);
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE charter.%I DETACH PARTITION charter.%I', v_part.parent, v_part.name);
        EXECUTE format('DROP TABLE charter.%I', v_part.name);
        v_dropped := v_dropped || to_jsonb(v_part.name);
    END LOOP;

    RETURN jsonb_build_object(
        'retentionDays', p_retention_days, 'cutoff', v_cutoff,
        'receiptsPruned', jsonb_build_object('steps', v_steps, 'outbox', v_outbox),
        'deliveredRowsPruned', jsonb_build_object('sideEffects', v_effects, 'documentEvents', v_events),
        'partitionsDropped', v_dropped, 'partitionsKept', v_kept);
END;
$$;
