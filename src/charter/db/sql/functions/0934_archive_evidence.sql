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
