-- Fires the due schedules (each tick once, see put_schedule). Returns how many ticks fired.
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
