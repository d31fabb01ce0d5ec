-- The options a step's tasks run with: each is the step's own, else its flow version's,
-- else the default (flow_option_defaults; a priority defaults to 0). The one place this
-- fallback is written: callers join it laterally, `CROSS JOIN LATERAL
-- charter._step_options(s, v) AS o`. One SELECT in SQL, not STRICT, without SECURITY
-- DEFINER or a SET clause, so PostgreSQL inlines it into the calling statement: it costs
-- what the coalesce written out in place cost, and plans made once stay generic.
CREATE OR REPLACE FUNCTION charter._step_options(s charter.flow_steps, v charter.workflow_versions)
RETURNS TABLE (max_attempts integer, base_delay integer, timeout_seconds integer,
               start_delay integer, priority smallint)
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT coalesce(s.opt_max_attempts, v.opt_max_attempts,
                    (charter.flow_option_defaults()->>'maxAttempts')::integer),
           coalesce(s.opt_base_delay, v.opt_base_delay,
                    (charter.flow_option_defaults()->>'baseDelay')::integer),
           coalesce(s.opt_timeout, v.opt_timeout,
                    (charter.flow_option_defaults()->>'timeout')::integer),
           coalesce(s.opt_start_delay, v.opt_start_delay,
                    (charter.flow_option_defaults()->>'startDelay')::integer),
           coalesce((s.opt_limits->>'priority')::smallint, (v.opt_limits->>'priority')::smallint,
                    0::smallint)
$$;
