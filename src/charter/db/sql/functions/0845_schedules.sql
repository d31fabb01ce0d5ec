-- Schedules: a cron expression that starts a flow run, creates a document, or passes a gate
-- for every document of an entity type that can pass it. The worker's call below is the
-- scheduler: a due schedule is taken with SKIP LOCKED, fired and moved to its next tick in
-- one transaction, so each tick fires exactly once however many workers run. A run or a
-- document a tick makes has an id derived from the schedule and the tick, so even a tick
-- fired twice by hand would not start twice.
--
-- Ticks missed while no worker ran (policy `missed`): 'latest' (the default) fires once for
-- the latest missed tick; 'all' fires every missed tick (up to 1,000 per call); 'skip' fires
-- none that is more than a minute late and waits for the next.

CREATE OR REPLACE FUNCTION charter.put_schedule(
    p_org_id text, p_name text, p_cron text, p_target jsonb, p_missed text DEFAULT 'latest',
    p_timezone text DEFAULT 'UTC')
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org      text := charter._acting_org(p_org_id);
    v_next     timestamptz;
    v_schedule charter.schedules;
BEGIN
    IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9_.:-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH050',
            MESSAGE = format('%L is not a schedule name: use 1 to 200 letters, digits, _ . : -', p_name),
            HINT = 'For example monthly-royalties.';
    END IF;
    IF p_missed IS NULL OR p_missed NOT IN ('latest', 'all', 'skip') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH050',
            MESSAGE = format('missed=%L is not a policy for missed ticks', p_missed),
            HINT = 'Use latest (fire once for the latest missed tick), all, or skip.';
    END IF;
    IF p_target->>'kind' = 'flow' THEN
        IF NOT EXISTS (SELECT 1 FROM charter.workflows AS w WHERE w.slug = p_target->>'flow'
                          AND w.current_version_id IS NOT NULL) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH003',
                MESSAGE = format('Flow %L is not published in this database', p_target->>'flow'),
                HINT = 'Deploy it first (charter deploy MODULE, or start a worker with it).';
        END IF;
        PERFORM charter._check_payload(p_target->'input', 'schedule input');
    ELSIF p_target->>'kind' = 'document' THEN
        PERFORM charter._org_contract(v_org, p_target->>'entityType');
        IF p_target->>'action' <> 'create' AND NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements((charter._org_contract(v_org, p_target->>'entityType')).contract->'transitions') AS t
                 WHERE t->>'gate' = p_target->>'action') THEN
            RAISE EXCEPTION USING ERRCODE = 'CH050',
                MESSAGE = format('action=%L is neither create nor a gate of %s', p_target->>'action', p_target->>'entityType'),
                HINT = 'A schedule creates a document (action="create", input=its fields) or passes a gate for every document that can pass it.';
        END IF;
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'CH050', MESSAGE = 'A schedule starts a flow or acts on documents',
            HINT = 'Pass flow= (and input=), or entity_type= and action=.';
    END IF;
    v_next := charter._cron_next(p_cron, charter._now(v_org), p_timezone);
    INSERT INTO charter.schedules AS s (org_id, name, cron, timezone, target, missed, next_at)
    VALUES (v_org, p_name, p_cron, p_timezone, p_target, p_missed, v_next)
    ON CONFLICT (org_id, name) DO UPDATE
       SET cron = excluded.cron, timezone = excluded.timezone, target = excluded.target,
           missed = excluded.missed, next_at = excluded.next_at, updated_at = now()
    RETURNING * INTO v_schedule;
    RETURN charter._schedule_json(v_schedule);
END;
$$;

CREATE OR REPLACE FUNCTION charter._schedule_json(p_schedule charter.schedules)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT jsonb_build_object('name', p_schedule.name, 'cron', p_schedule.cron, 'timezone', p_schedule.timezone,
                              'target', p_schedule.target, 'missed', p_schedule.missed,
                              'nextAt', p_schedule.next_at, 'lastTickAt', p_schedule.last_tick_at,
                              'lastResult', p_schedule.last_result, 'orgId', p_schedule.org_id)
$$;

CREATE OR REPLACE FUNCTION charter.list_schedules(p_org_id text)
RETURNS SETOF jsonb
LANGUAGE sql
SECURITY DEFINER
STABLE
SET search_path = ''
AS $$
    SELECT charter._schedule_json(s) FROM charter.schedules AS s
     WHERE s.org_id = charter._acting_org(p_org_id) ORDER BY s.name
$$;

CREATE OR REPLACE FUNCTION charter.delete_schedule(p_org_id text, p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    DELETE FROM charter.schedules AS s WHERE s.org_id = charter._acting_org(p_org_id) AND s.name = p_name;
    RETURN FOUND;
END;
$$;

-- Fires the due schedules (each tick once, see above). Returns how many ticks fired.
CREATE OR REPLACE FUNCTION charter.fire_due_schedules(p_limit integer DEFAULT 20)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_due      record;
    v_schedule charter.schedules;
    v_now      timestamptz;
    v_tick     timestamptz;
    v_ticks    timestamptz[];
    v_fired    integer := 0;
    v_result   jsonb;
    v_message  text;
    v_served   text[] := charter._served_orgs();  -- a worker given its orgs fires theirs
    v_taken    integer := 0;
BEGIN
    -- What is due is read in every org, locking nothing; each schedule is then locked by its
    -- key, so no statement that locks spans orgs (docs/architecture.md § 15). The read has no
    -- LIMIT: pollers read the same due rows, and one that finds the first p_limit locked by
    -- another goes on to those after them (the loop reads as it goes and stops at p_limit).
    FOR v_due IN SELECT s.org_id, s.name FROM charter.schedules AS s
                  WHERE s.next_at <= charter._now_at_most() AND s.next_at <= charter._now(s.org_id)
                    AND (v_served IS NULL OR array_position(v_served, s.org_id) IS NOT NULL)
                  ORDER BY s.next_at LOOP
        EXIT WHEN v_taken >= p_limit;
        v_now := charter._now(v_due.org_id);  -- each org's schedules run on its own clock
        SELECT * INTO v_schedule FROM charter.schedules AS s
         WHERE s.org_id = v_due.org_id AND s.name = v_due.name AND s.next_at <= v_now
           FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND;  -- fired by another poller meanwhile, or being fired now
        v_taken := v_taken + 1;
        v_ticks := '{}';
        v_tick := v_schedule.next_at;
        WHILE v_tick <= v_now AND cardinality(v_ticks) < 1000 LOOP
            v_ticks := v_ticks || v_tick;
            v_tick := charter._cron_next(v_schedule.cron, v_tick, v_schedule.timezone);
        END LOOP;
        v_ticks := CASE v_schedule.missed
            WHEN 'all' THEN v_ticks
            WHEN 'latest' THEN ARRAY[v_ticks[cardinality(v_ticks)]]
            ELSE ARRAY(SELECT t FROM unnest(v_ticks) AS t WHERE t > v_now - interval '1 minute') END;
        v_result := '[]'::jsonb;
        FOREACH v_tick IN ARRAY v_ticks LOOP
            BEGIN
                v_result := v_result || jsonb_build_array(charter._fire_tick(v_schedule, v_tick));
            EXCEPTION WHEN others THEN
                GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
                v_result := v_result || jsonb_build_array(jsonb_build_object('tick', v_tick, 'error', v_message));
            END;
            v_fired := v_fired + 1;
        END LOOP;
        UPDATE charter.schedules AS s
           SET next_at = charter._cron_next(s.cron, greatest(v_now, s.next_at), s.timezone),
               last_tick_at = coalesce(v_ticks[cardinality(v_ticks)], s.last_tick_at),
               last_result = CASE WHEN cardinality(v_ticks) = 0 THEN jsonb_build_object('skipped', true)
                                  ELSE v_result->(jsonb_array_length(v_result) - 1) END,
               updated_at = now()
         WHERE s.org_id = v_schedule.org_id AND s.name = v_schedule.name;
    END LOOP;
    RETURN v_fired;
END;
$$;

-- One tick: a flow run with the id schedule:<org>:<name>:<tick>, a document with that id,
-- or a gate passed (as system) for every document of the entity type in a state it leads from.
CREATE OR REPLACE FUNCTION charter._fire_tick(p_schedule charter.schedules, p_tick timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_id       text := format('schedule:%s:%s', p_schedule.name, to_char(p_tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'));
    v_target   jsonb := p_schedule.target;
    v_run      jsonb;
    v_document text;
    v_count    integer := 0;
BEGIN
    IF v_target->>'kind' = 'flow' THEN
        v_run := charter.start_run(v_target->>'flow', coalesce(v_target->'input', 'null'::jsonb),
                                   p_schedule.org_id || ':' || v_id, p_schedule.org_id);
        RETURN jsonb_build_object('tick', p_tick, 'runId', v_run->>'runId');
    END IF;
    PERFORM set_config('charter.org_id', p_schedule.org_id, true);
    IF v_target->>'action' = 'create' THEN
        PERFORM charter.mutate(p_schedule.org_id, 'create', v_id, coalesce(v_target->'input', '{}'::jsonb), 'system',
                               p_entity_type => v_target->>'entityType', p_reason => format('schedule %s', p_schedule.name),
                               p_via => 'system');
        RETURN jsonb_build_object('tick', p_tick, 'documentId', v_id);
    END IF;
    FOR v_document IN
        SELECT d.id FROM charter.documents AS d
         WHERE d.org_id = p_schedule.org_id AND d.entity_type = v_target->>'entityType'
           AND d.amended_by IS NULL  -- superseded: its amendment goes through the gate instead
           AND d.state IN (SELECT t->>'from' FROM charter.workflow_versions AS c,
                                  jsonb_array_elements(c.contract->'transitions') AS t
                            WHERE c.id = d.contract_version_id AND t->>'gate' = v_target->>'action')
         ORDER BY d.id LOOP
        PERFORM charter.mutate(p_schedule.org_id, v_target->>'action', v_document, '{}'::jsonb, 'system',
                               p_reason => format('schedule %s', p_schedule.name), p_via => 'system');
        v_count := v_count + 1;
    END LOOP;
    RETURN jsonb_build_object('tick', p_tick, 'documents', v_count);
END;
$$;
