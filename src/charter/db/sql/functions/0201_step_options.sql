-- The options a step's tasks run with: each is the step's own, else its flow version's,
-- else the default (flow_option_defaults; a priority defaults to 0). The one place this
-- fallback is written: callers join it laterally, `CROSS JOIN LATERAL
-- charter._step_options(s.opt_max_attempts, ..., v.opt_limits) AS o`: the columns, not
-- the rows, since on Citus a reference table's row has its shard's row type. One SELECT
-- in SQL, not STRICT, without SECURITY DEFINER or a SET clause, so PostgreSQL inlines it
-- into the calling statement: it costs what the coalesce written out in place cost, and
-- plans made once stay generic.
CREATE OR REPLACE FUNCTION charter._step_options(
    s_max_attempts integer, s_base_delay integer, s_timeout integer, s_start_delay integer,
    s_limits jsonb,
    v_max_attempts integer, v_base_delay integer, v_timeout integer, v_start_delay integer,
    v_limits jsonb)
RETURNS TABLE (max_attempts integer, base_delay integer, timeout_seconds integer,
               start_delay integer, priority smallint)
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT coalesce(s_max_attempts, v_max_attempts,
                    (charter.flow_option_defaults()->>'maxAttempts')::integer),
           coalesce(s_base_delay, v_base_delay,
                    (charter.flow_option_defaults()->>'baseDelay')::integer),
           coalesce(s_timeout, v_timeout,
                    (charter.flow_option_defaults()->>'timeout')::integer),
           coalesce(s_start_delay, v_start_delay,
                    (charter.flow_option_defaults()->>'startDelay')::integer),
           coalesce((s_limits->>'priority')::smallint, (v_limits->>'priority')::smallint,
                    0::smallint)
$$;
