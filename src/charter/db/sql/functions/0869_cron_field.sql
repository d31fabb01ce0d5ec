-- Cron expressions for schedules: five fields (minute hour day-of-month month day-of-week),
-- each '*', a number, a range a-b, a step */n or a-b/n, or a list of those; months and days
-- may be named (jan, mon); @hourly, @daily, @weekly, @monthly and @yearly. As in classic
-- cron, when both day fields are restricted a day matching either one matches.

-- The values one field allows, or an error naming the field.
CREATE OR REPLACE FUNCTION charter._cron_field(p_field text, p_min integer, p_max integer, p_what text)
RETURNS integer[]
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_part   text;
    v_match  text[];
    v_from   integer;
    v_to     integer;
    v_step   integer;
    v_values integer[] := '{}';
    v_names  text := CASE p_what WHEN 'month' THEN 'jan feb mar apr may jun jul aug sep oct nov dec'
                                 WHEN 'day of week' THEN 'sun mon tue wed thu fri sat' END;
    v_text   text := lower(p_field);
BEGIN
    IF v_names IS NOT NULL THEN
        FOR i IN 1..array_length(string_to_array(v_names, ' '), 1) LOOP
            v_text := replace(v_text, (string_to_array(v_names, ' '))[i],
                              (i - 1 + CASE WHEN p_what = 'month' THEN 1 ELSE 0 END)::text);
        END LOOP;
    END IF;
    FOREACH v_part IN ARRAY string_to_array(v_text, ',') LOOP
        v_match := regexp_match(v_part, '^(\*|(\d+)(?:-(\d+))?)(?:/(\d+))?$');
        IF v_match IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'CH050',
                MESSAGE = format('%L is not a cron %s field', p_field, p_what),
                HINT = 'Use *, a number, a range a-b, a step */n or a-b/n, or a list of those.';
        END IF;
        v_from := CASE WHEN v_match[1] = '*' THEN p_min ELSE v_match[2]::integer END;
        v_to := CASE WHEN v_match[1] = '*' THEN p_max
                     WHEN v_match[3] IS NOT NULL THEN v_match[3]::integer
                     WHEN v_match[4] IS NOT NULL THEN p_max
                     ELSE v_from END;
        v_step := coalesce(v_match[4]::integer, 1);
        IF v_from > v_to OR v_step < 1 THEN
            RAISE EXCEPTION USING ERRCODE = 'CH050',
                MESSAGE = format('Cron %s field %L is an empty range (from %s to %s by %s)', p_what, p_field, v_from, v_to, v_step),
                HINT = 'Write ranges low-high with a step of 1 or more, e.g. 1-5 or */15.';
        END IF;
        IF v_from < p_min OR v_to > p_max THEN
            RAISE EXCEPTION USING ERRCODE = 'CH050',
                MESSAGE = format('Cron %s field %L is outside %s-%s', p_what, p_field, p_min, p_max),
                HINT = 'Check the order: minute hour day-of-month month day-of-week.';
        END IF;
        v_values := v_values || ARRAY(SELECT generate_series(v_from, v_to, v_step));
    END LOOP;
    -- Day of week 7 is Sunday too.
    RETURN ARRAY(SELECT DISTINCT CASE WHEN p_what = 'day of week' AND v = 7 THEN 0 ELSE v END
                   FROM unnest(v_values) AS v ORDER BY 1);
END;
$$;
