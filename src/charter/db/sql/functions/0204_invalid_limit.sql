-- Why a concurrency ({"key"?, "limit"}) or rateLimit ({"key", "perSecond", "burst"?}) option
-- is not valid, or NULL when it is (or is null).
CREATE OR REPLACE FUNCTION charter._invalid_limit(p_name text, p_value jsonb, p_where text)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
DECLARE
    v_key    text;
    v_number numeric;
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_value) <> 'object' THEN
        RETURN format('%s: %s must be an object, not %s', p_where, p_name, p_value);
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_value) LOOP
        IF NOT (v_key = ANY (CASE WHEN p_name = 'concurrency' THEN '{key,limit}'::text[]
                                  ELSE '{key,perSecond,burst}'::text[] END)) THEN
            RETURN format('%s: %s has an unknown field %L (known: %s)', p_where, p_name, v_key,
                          CASE WHEN p_name = 'concurrency' THEN 'key, limit' ELSE 'key, perSecond, burst' END);
        END IF;
    END LOOP;
    IF p_value ? 'key' AND (jsonb_typeof(p_value->'key') <> 'string'
                            OR length(p_value->>'key') NOT BETWEEN 1 AND 200) THEN
        RETURN format('%s: %s key must be a string of 1 to 200 characters, not %s', p_where, p_name, p_value->'key');
    END IF;
    IF p_name = 'concurrency' THEN
        v_number := CASE WHEN jsonb_typeof(p_value->'limit') = 'number' THEN (p_value->>'limit')::numeric END;
        IF v_number IS NULL OR v_number <> trunc(v_number) OR v_number NOT BETWEEN 1 AND 100000 THEN
            RETURN format('%s: concurrency limit is %s; use a whole number from 1 to 100000', p_where, coalesce(p_value->'limit', 'missing'));
        END IF;
        RETURN NULL;
    END IF;
    IF NOT p_value ? 'key' THEN
        RETURN format('%s: rateLimit needs a key (the bucket its tasks share, e.g. "stripe" or "run.account_id")', p_where);
    END IF;
    v_number := CASE WHEN jsonb_typeof(p_value->'perSecond') = 'number' THEN (p_value->>'perSecond')::numeric END;
    IF v_number IS NULL OR v_number <= 0 OR v_number > 100000 THEN
        RETURN format('%s: rateLimit perSecond is %s; use a number above 0 and at most 100000', p_where, coalesce(p_value->'perSecond', 'missing'));
    END IF;
    IF p_value ? 'burst' THEN
        v_number := CASE WHEN jsonb_typeof(p_value->'burst') = 'number' THEN (p_value->>'burst')::numeric END;
        IF v_number IS NULL OR v_number <> trunc(v_number) OR v_number NOT BETWEEN 1 AND 100000 THEN
            RETURN format('%s: rateLimit burst is %s; use a whole number from 1 to 100000', p_where, p_value->'burst');
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
