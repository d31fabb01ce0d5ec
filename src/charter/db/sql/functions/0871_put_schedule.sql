-- Schedules: a cron expression that starts a flow run, creates a document, or passes a gate
-- for every document of an entity type that can pass it. The worker's call,
-- fire_due_schedules, is the scheduler: a due schedule is taken with SKIP LOCKED, fired and moved to its next tick in
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
