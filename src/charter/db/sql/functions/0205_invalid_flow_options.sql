-- Why p_options is not a valid options object ({"maxAttempts", "baseDelay", "timeout",
-- "startDelay", "priority"}, each null or a whole number in range, and "concurrency" and
-- "rateLimit" objects), or NULL when it is valid.
CREATE OR REPLACE FUNCTION charter._invalid_flow_options(p_options jsonb, p_where text)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_key   text;
    v_value jsonb;
    v_low   numeric;
    v_high  numeric;
    v_problem text;
BEGIN
    IF p_options IS NULL OR jsonb_typeof(p_options) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_options) <> 'object' THEN
        RETURN format('%s must be an object', p_where);
    END IF;
    FOR v_key, v_value IN SELECT key, value FROM jsonb_each(p_options) LOOP
        CASE v_key
            WHEN 'maxAttempts' THEN v_low := 1; v_high := 1000;
            WHEN 'baseDelay' THEN v_low := 0; v_high := 86400;
            WHEN 'timeout' THEN v_low := 1; v_high := 86400;
            WHEN 'startDelay' THEN v_low := 0; v_high := 31536000;
            WHEN 'priority' THEN v_low := 0; v_high := 1000;
            WHEN 'concurrency', 'rateLimit' THEN
                v_problem := charter._invalid_limit(v_key, v_value, p_where);
                IF v_problem IS NOT NULL THEN
                    RETURN v_problem;
                END IF;
                CONTINUE;
            ELSE RETURN format('%s have an unknown option %L (known: maxAttempts, baseDelay, timeout, startDelay, priority, concurrency, rateLimit)', p_where, v_key);
        END CASE;
        IF jsonb_typeof(v_value) = 'null' THEN
            CONTINUE;
        END IF;
        IF jsonb_typeof(v_value) <> 'number' OR (v_value #>> '{}')::numeric <> trunc((v_value #>> '{}')::numeric)
           OR (v_value #>> '{}')::numeric NOT BETWEEN v_low AND v_high THEN
            RETURN format('%s: %s is %s; use a whole number from %s to %s', p_where, v_key, v_value, v_low, v_high);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

