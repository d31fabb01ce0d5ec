-- Trigger function: step_executions and step_receipts are append-only facts (WF-09). Only
-- delete_flow_and_data() may remove them, with the rest of its flow.
CREATE OR REPLACE FUNCTION charter._protect_evidence()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'DELETE' AND coalesce(current_setting('charter.deleting_flow', true), '') <> '' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = format('charter.%s is append-only evidence: rows cannot be %s',
                         TG_TABLE_NAME, CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed' END),
        HINT = 'Record what happened as new rows; old partitions of step_executions may be detached or dropped whole for retention.';
END;
$$;
