-- Trigger function: append-only facts — step_executions and step_receipts (WF-09), document
-- versions, the audit trail and outbox receipts. Only delete_flow_and_data() may remove
-- the evidence of a flow, with the rest of it.
CREATE OR REPLACE FUNCTION charter._protect_evidence()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'DELETE' AND coalesce(current_setting('charter.deleting_flow', true), '') <> '' THEN
        RETURN OLD;
    END IF;
    -- Retention (run_maintenance) forgets receipts older than its window, and only those.
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME IN ('step_receipts', 'outbox_receipts')
       AND coalesce(current_setting('charter.retention', true), '') = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = format('charter.%s is append-only evidence: rows cannot be %s',
                         TG_TABLE_NAME, CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed' END),
        HINT = 'Record what happened as new rows (a document changes only through charter.mutate); old partitions may be detached or dropped whole for retention.';
END;
$$;
