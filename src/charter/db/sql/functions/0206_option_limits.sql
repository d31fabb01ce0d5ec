-- The limits among options (priority, concurrency, rateLimit), as stored in opt_limits:
-- only those that are set, NULL when none is.
CREATE OR REPLACE FUNCTION charter._option_limits(p_options jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
SET search_path = ''
AS $$
    SELECT nullif(jsonb_strip_nulls(jsonb_build_object(
               'priority', p_options->'priority',
               'concurrency', p_options->'concurrency',
               'rateLimit', p_options->'rateLimit')), '{}'::jsonb)
     WHERE jsonb_typeof(p_options) = 'object'
$$;
