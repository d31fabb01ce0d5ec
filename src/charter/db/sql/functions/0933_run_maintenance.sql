CREATE OR REPLACE FUNCTION charter.run_maintenance(p_retention_days integer DEFAULT 90)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_cutoff     timestamptz;
    v_runs       bigint;
    v_expired_ids  text[];
    v_expired_orgs text[];
    v_rows       bigint;
    v_steps      bigint;
    v_outbox     bigint;
    v_effects    bigint;
    v_events     bigint;
    v_part       record;
    v_reason     text;
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

    -- Whole partitions first (cheap): each month of schema charter that ended before the
    -- cutoff and holds nothing that is kept.
    FOR v_part IN
        SELECT parent.relname AS parent, child.relname AS name,
               (to_date(right(child.relname, 7), 'YYYY_MM') + interval '1 month') AT TIME ZONE 'UTC' AS ends
          FROM pg_catalog.pg_inherits AS i
          JOIN pg_catalog.pg_class AS child ON child.oid = i.inhrelid
          JOIN pg_catalog.pg_class AS parent ON parent.oid = i.inhparent
          JOIN pg_catalog.pg_namespace AS n ON n.oid = parent.relnamespace
          JOIN pg_catalog.pg_namespace AS cn ON cn.oid = child.relnamespace
         WHERE n.nspname = 'charter' AND cn.nspname = 'charter'
           AND parent.relname IN ('step_executions', 'document_events', 'side_effects')
           AND child.relname ~ '_\d{4}_\d{2}$'
         ORDER BY 2
    LOOP
        CONTINUE WHEN v_part.ends > v_cutoff;
        v_reason := NULL;
        IF v_part.parent IN ('step_executions', 'side_effects') THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p JOIN charter.workflow_instances AS w
                                                      ON w.id = p.run_id AND w.org_id = p.org_id)', v_part.name)
               INTO STRICT v_busy;
            v_reason := CASE WHEN v_busy THEN 'holds document evidence (kept for good; archive it with charter maintenance --archive-before)' END;
        END IF;
        IF v_reason IS NULL AND v_part.parent = 'step_executions' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p LEFT JOIN charter.runs AS u
                                                      ON u.id = p.run_id AND u.org_id = p.org_id
                             WHERE u.id IS NOT NULL AND (u.status NOT IN (''completed'', ''cancelled'')
                                                         OR u.finished_at >= %L))', v_part.name, v_cutoff)
               INTO STRICT v_busy;
            v_reason := CASE WHEN v_busy THEN 'holds evidence of a run not finished before the cutoff' END;
        ELSIF v_reason IS NULL THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p WHERE p.status NOT IN (''completed'', ''cancelled''))',
                           v_part.name)
               INTO STRICT v_busy;
            v_reason := CASE WHEN v_busy THEN 'holds rows not delivered (pending, failing or dead letters)' END;
        END IF;
        IF v_reason IS NOT NULL THEN
            v_kept := v_kept || jsonb_build_object('partition', v_part.name, 'reason', v_reason);
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE charter.%I DETACH PARTITION charter.%I', v_part.parent, v_part.name);
        EXECUTE format('DROP TABLE charter.%I', v_part.name);
        v_dropped := v_dropped || to_jsonb(v_part.name);
    END LOOP;

    -- Then expired flow runs row by row, wherever their rows are (a kept partition, the
    -- default one, the archive). The evidence triggers refuse any row of a document instance.
    -- The runs are looked up once: each delete below reads the same list.
    SELECT coalesce(array_agg(x.run_id), '{}'), coalesce(array_agg(x.org_id), '{}')
      INTO v_expired_ids, v_expired_orgs
      FROM charter._expired_flow_runs(v_cutoff) AS x;
    DELETE FROM charter.step_executions AS e
     WHERE e.created_at < v_cutoff
       AND (e.run_id, e.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    DELETE FROM charter.step_receipts AS r
     WHERE (r.run_id, r.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    GET DIAGNOSTICS v_steps = ROW_COUNT;
    DELETE FROM charter.inbox AS b
     WHERE (b.run_id, b.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    DELETE FROM charter.step_states AS s
     WHERE (s.run_id, s.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    DELETE FROM charter.tasks AS t
     WHERE (t.run_id, t.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    DELETE FROM charter.flow_event_waits AS f
     WHERE (f.run_id, f.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    DELETE FROM charter.runs AS u
     WHERE (u.id, u.org_id) IN (SELECT x.run_id, x.org_id FROM unnest(v_expired_ids, v_expired_orgs) AS x (run_id, org_id));
    GET DIAGNOSTICS v_runs = ROW_COUNT;

    DELETE FROM charter.outbox_receipts AS r WHERE r.created_at < v_cutoff;
    GET DIAGNOSTICS v_outbox = ROW_COUNT;
    DELETE FROM charter.side_effects AS x
     WHERE x.status IN ('completed', 'cancelled') AND x.completed_at < v_cutoff
       AND NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS w
                        WHERE w.id = x.run_id AND w.org_id = x.org_id);
    GET DIAGNOSTICS v_effects = ROW_COUNT;
    DELETE FROM charter.document_events AS e WHERE e.status = 'completed' AND e.completed_at < v_cutoff;
    GET DIAGNOSTICS v_events = ROW_COUNT;

    RETURN jsonb_build_object(
        'retentionDays', p_retention_days, 'cutoff', v_cutoff,
        'flowRunsForgotten', jsonb_build_object('runs', v_runs, 'stepExecutions', v_rows),
        'receiptsPruned', jsonb_build_object('steps', v_steps, 'outbox', v_outbox),
        'deliveredRowsPruned', jsonb_build_object('sideEffects', v_effects, 'documentEvents', v_events),
        'partitionsDropped', v_dropped, 'partitionsKept', v_kept);
END;
$$;
