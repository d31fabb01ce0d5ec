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
