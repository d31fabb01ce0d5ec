-- The first time after p_after (exclusive) that the cron expression names, in p_timezone.
CREATE OR REPLACE FUNCTION charter._cron_next(p_cron text, p_after timestamptz, p_timezone text DEFAULT 'UTC')
RETURNS timestamptz
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_spec    text := CASE lower(btrim(p_cron))
                          WHEN '@hourly' THEN '0 * * * *' WHEN '@daily' THEN '0 0 * * *'
                          WHEN '@midnight' THEN '0 0 * * *' WHEN '@weekly' THEN '0 0 * * 0'
                          WHEN '@monthly' THEN '0 0 1 * *' WHEN '@yearly' THEN '0 0 1 1 *'
                          WHEN '@annually' THEN '0 0 1 1 *' ELSE btrim(p_cron) END;
    v_fields  text[] := regexp_split_to_array(v_spec, '\s+');
    v_minutes integer[];
    v_hours   integer[];
    v_doms    integer[];
    v_months  integer[];
    v_dows    integer[];
    v_local   timestamp;
    v_day     date;
    v_first   boolean := true;
    v_dom_any boolean;
    v_dow_any boolean;
    v_hour    integer;
    v_minute  integer;
    v_matches boolean;
BEGIN
    IF array_length(v_fields, 1) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH050',
            MESSAGE = format('%L is not a cron expression: it needs five fields, has %s', p_cron,
                             coalesce(array_length(v_fields, 1), 0)),
            HINT = 'minute hour day-of-month month day-of-week, e.g. ''0 6 1 * *'' (06:00 on the 1st), or @daily.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names WHERE name = p_timezone) THEN
        RAISE EXCEPTION USING ERRCODE = 'CH050', MESSAGE = format('%L is not a time zone', p_timezone),
            HINT = 'Use an IANA name such as Europe/Berlin, or UTC.';
    END IF;
    v_minutes := charter._cron_field(v_fields[1], 0, 59, 'minute');
    v_hours := charter._cron_field(v_fields[2], 0, 23, 'hour');
    v_doms := charter._cron_field(v_fields[3], 1, 31, 'day of month');
    v_months := charter._cron_field(v_fields[4], 1, 12, 'month');
    v_dows := charter._cron_field(v_fields[5], 0, 7, 'day of week');
    v_dom_any := v_fields[3] = '*';
    v_dow_any := v_fields[5] = '*';
    v_local := date_trunc('minute', p_after AT TIME ZONE p_timezone) + interval '1 minute';
    v_day := v_local::date;
    FOR i IN 0..(366 * 5) LOOP
        v_matches := extract(month FROM v_day)::integer = ANY (v_months)
            AND CASE WHEN v_dom_any AND v_dow_any THEN true
                     WHEN v_dom_any THEN extract(dow FROM v_day)::integer = ANY (v_dows)
                     WHEN v_dow_any THEN extract(day FROM v_day)::integer = ANY (v_doms)
                     ELSE extract(day FROM v_day)::integer = ANY (v_doms)
                          OR extract(dow FROM v_day)::integer = ANY (v_dows) END;
        IF v_matches THEN
            FOREACH v_hour IN ARRAY v_hours LOOP
                CONTINUE WHEN v_first AND v_hour < extract(hour FROM v_local);
                FOREACH v_minute IN ARRAY v_minutes LOOP
                    CONTINUE WHEN v_first AND v_hour = extract(hour FROM v_local)
                                  AND v_minute < extract(minute FROM v_local);
                    RETURN (v_day + make_time(v_hour, v_minute, 0)) AT TIME ZONE p_timezone;
                END LOOP;
            END LOOP;
        END IF;
        v_day := v_day + 1;
        v_first := false;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = 'CH050', MESSAGE = format('Cron expression %L never fires', p_cron),
        HINT = 'Check the day of month and month (e.g. 31 in February).';
END;
$$;
