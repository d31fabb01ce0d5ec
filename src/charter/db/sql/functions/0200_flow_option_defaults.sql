-- The defaults of flow and step options: the one place they are defined. A NULL option
-- on a step inherits the flow's; a NULL on the flow takes these.
CREATE OR REPLACE FUNCTION charter.flow_option_defaults()
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $$
    SELECT '{"maxAttempts": 3, "baseDelay": 1, "timeout": 60, "startDelay": 0}'::jsonb
$$;
