-- Creates the monthly partitions of charter.step_executions, charter.document_events and
-- charter.side_effects for this month and the next p_months_ahead (months in UTC). Returns
-- how many it created. Called by every migrate and by workers, so a partition always exists
-- before its month starts; a month whose rows already went to the default partition is left
-- there (creating it would fail).
CREATE OR REPLACE FUNCTION charter.ensure_partitions(p_months_ahead integer DEFAULT 2)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_table   text;
    v_month   timestamp;
    v_from    timestamptz;
    v_to      timestamptz;
    v_name    text;
    v_created integer := 0;
    v_taken   boolean;
BEGIN
    FOREACH v_table IN ARRAY ARRAY['step_executions', 'document_events', 'side_effects'] LOOP
        CONTINUE WHEN to_regclass('charter.' || v_table) IS NULL;  -- not migrated that far yet
        FOR v_offset IN 0..p_months_ahead LOOP
            v_month := date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => v_offset);
            v_from := v_month AT TIME ZONE 'UTC';
            v_to := (v_month + interval '1 month') AT TIME ZONE 'UTC';
            v_name := v_table || '_' || to_char(v_month, 'YYYY_MM');
            CONTINUE WHEN to_regclass('charter.' || v_name) IS NOT NULL;
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM charter.%I WHERE created_at >= %L AND created_at < %L)',
                           v_table || '_default', v_from, v_to) INTO v_taken;
            CONTINUE WHEN v_taken;
            EXECUTE format('CREATE TABLE charter.%I PARTITION OF charter.%I FOR VALUES FROM (%L) TO (%L)',
                           v_name, v_table, v_from, v_to);
            v_created := v_created + 1;
        END LOOP;
    END LOOP;
    RETURN v_created;
END;
$$;
