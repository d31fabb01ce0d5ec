-- Retention (seed 002 § Partition Strategy, § Receipts Pruning): what is older than the
-- window is forgotten, never what a running instance or an undelivered effect still needs,
-- and never a document's evidence. Seed 002 keeps a document's evidence for good: its
-- versions, audit trail and approvals (retention never touches those tables), and its
-- instances' step executions, step receipts and side effects (delivered or not).
--   * flow runs completed or cancelled before the cutoff (not document instances; not a
--     child of a run kept, nor a parent of one) are forgotten whole: their evidence,
--     receipts, readiness, inbox, leftover tasks and event waits, then the run itself;
--   * outbox receipts written before the cutoff (dedup holds for every key inside the window);
--   * delivered (completed or cancelled) side effects that are not a document instance's,
--     and applied document events, finished before the cutoff;
--   * monthly partitions in schema charter that ended before the cutoff are detached and
--     dropped whole when they hold nothing kept — no document instance's row, no row of a
--     run not finished before the cutoff, no outbox row not delivered; a partition that
--     holds any is kept (and reported), and only its expired flow rows are deleted, row by
--     row. Partitions moved to schema charter_archive (archive_evidence) are never dropped.
-- One maintenance at a time (an advisory lock); returns a report.
-- Only the schema's owner may keep less than the deduplication window (90 days: an
-- idempotency key used inside it is still a duplicate); the worker role, which runs this
-- hourly, is refused with PERMISSION_DENIED rather than let a setting forget keys early.

-- The flow runs retention forgets at this cutoff: completed or cancelled before it, not a
-- document's instance, and neither a child of a run that is kept nor the parent of one.
CREATE OR REPLACE FUNCTION charter._expired_flow_runs(p_cutoff timestamptz)
RETURNS TABLE (run_id text, org_id text)
LANGUAGE sql
STABLE
SET search_path = ''
AS $$
    SELECT u.id, u.org_id
      FROM charter.runs AS u
     WHERE u.status IN ('completed', 'cancelled') AND u.finished_at < p_cutoff
       AND NOT EXISTS (SELECT 1 FROM charter.workflow_instances AS i
                        WHERE i.id = u.id AND i.org_id = u.org_id)
       AND NOT EXISTS (SELECT 1 FROM charter.runs AS p
                        WHERE p.id = u.parent_run_id AND p.org_id = u.org_id
                          AND (p.status NOT IN ('completed', 'cancelled') OR p.finished_at >= p_cutoff
                               OR EXISTS (SELECT 1 FROM charter.workflow_instances AS pi
                                           WHERE pi.id = p.id AND pi.org_id = p.org_id)))
       AND NOT EXISTS (SELECT 1 FROM charter.runs AS c
                        WHERE c.parent_run_id = u.id AND c.org_id = u.org_id
                          AND (c.status NOT IN ('completed', 'cancelled') OR c.finished_at >= p_cutoff));
$$;

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

-- Archives old evidence (charter maintenance --archive-before DATE): every monthly partition
-- of step_executions and side_effects in schema charter whose month ended on or before
-- p_before moves to schema charter_archive, still a partition of its parent — so get_run,
-- documents.history, the projection rebuild and every other reader read it as before, and
-- retention never drops it (it forgets expired flow rows there row by row). Each archived
-- table keeps org_id and gets row-level security (org_isolation) and no privilege for the
-- app's and worker's roles, like its parent. A month still holding a run that is not
-- finished, or an outbox row not delivered, stays (reported). Only the owner of schema
-- charter may archive (moving a table needs its owner). p_before must be a day no later
-- than today (UTC): ARCHIVE_DATE_INVALID otherwise.
CREATE OR REPLACE FUNCTION charter.archive_evidence(p_before date)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_today    date := (now() AT TIME ZONE 'UTC')::date;
    v_part     record;
    v_busy     boolean;
    v_archived jsonb := '[]';
    v_kept     jsonb := '[]';
BEGIN
    IF p_before IS NULL OR p_before > v_today THEN
        RAISE EXCEPTION USING ERRCODE = 'CH120',
            MESSAGE = format('Cannot archive evidence before %s: the date must be a day no later than today (%s)',
                             coalesce(p_before::text, 'no date'), v_today),
            HINT = 'Name a past day as YYYY-MM-DD, e.g. --archive-before 2025-01-01: months that ended on or before it are archived.';
    END IF;
    IF NOT pg_try_advisory_xact_lock(charter._lock_key('maintenance', 'retention')) THEN
        RETURN jsonb_build_object('skipped', 'another maintenance is running');
    END IF;
    FOR v_part IN
        SELECT parent.relname AS parent, child.relname AS name
          FROM pg_catalog.pg_inherits AS i
          JOIN pg_catalog.pg_class AS child ON child.oid = i.inhrelid
          JOIN pg_catalog.pg_class AS parent ON parent.oid = i.inhparent
          JOIN pg_catalog.pg_namespace AS n ON n.oid = parent.relnamespace
          JOIN pg_catalog.pg_namespace AS cn ON cn.oid = child.relnamespace
         WHERE n.nspname = 'charter' AND cn.nspname = 'charter'
           AND parent.relname IN ('step_executions', 'side_effects')
           AND child.relname ~ '_\d{4}_\d{2}$'
           AND to_date(right(child.relname, 7), 'YYYY_MM') + interval '1 month' <= p_before
         ORDER BY 2
    LOOP
        IF v_part.parent = 'step_executions' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p JOIN charter.runs AS u
                                                      ON u.id = p.run_id AND u.org_id = p.org_id
                             WHERE u.status = ''running'')', v_part.name)
               INTO STRICT v_busy;
        ELSE
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I AS p WHERE p.status NOT IN (''completed'', ''cancelled''))',
                           v_part.name)
               INTO STRICT v_busy;
        END IF;
        IF v_busy THEN
            v_kept := v_kept || jsonb_build_object('partition', v_part.name, 'reason',
                CASE WHEN v_part.parent = 'step_executions' THEN 'holds evidence of a run still running'
                     ELSE 'holds rows not delivered (pending, failing or dead letters)' END);
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE charter.%I SET SCHEMA charter_archive', v_part.name);
        EXECUTE format('ALTER TABLE charter_archive.%I ENABLE ROW LEVEL SECURITY', v_part.name);
        EXECUTE format('CREATE POLICY org_isolation ON charter_archive.%I USING (org_id = current_setting(''charter.org_id'', true))',
                       v_part.name);
        EXECUTE format('REVOKE ALL ON charter_archive.%I FROM PUBLIC, charter_worker, charter_app', v_part.name);
        v_archived := v_archived || to_jsonb('charter_archive.' || v_part.name);
    END LOOP;
    RETURN jsonb_build_object('archiveBefore', p_before, 'partitionsArchived', v_archived,
                              'partitionsKept', v_kept);
END;
$$;
