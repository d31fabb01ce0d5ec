-- Creates the monthly partitions of charter.step_executions for this month and the next
-- p_months_ahead (months in UTC). Returns how many it created. Called by every migrate and
-- by workers, so a partition always exists before its month starts; a month whose rows
-- already went to the default partition is left there (creating it would fail).
CREATE OR REPLACE FUNCTION charter.ensure_partitions(p_months_ahead integer DEFAULT 2)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_month   timestamp;
    v_from    timestamptz;
    v_to      timestamptz;
    v_name    text;
    v_created integer := 0;
BEGIN
    FOR v_offset IN 0..p_months_ahead LOOP
        v_month := date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => v_offset);
        v_from := v_month AT TIME ZONE 'UTC';
        v_to := (v_month + interval '1 month') AT TIME ZONE 'UTC';
        v_name := 'step_executions_' || to_char(v_month, 'YYYY_MM');
        CONTINUE WHEN to_regclass('charter.' || v_name) IS NOT NULL;
        CONTINUE WHEN EXISTS (SELECT 1 FROM charter.step_executions_default AS d
                               WHERE d.created_at >= v_from AND d.created_at < v_to);
        EXECUTE format('CREATE TABLE charter.%I PARTITION OF charter.step_executions FOR VALUES FROM (%L) TO (%L)',
                       v_name, v_from, v_to);
        v_created := v_created + 1;
    END LOOP;
    RETURN v_created;
END;
$$;
