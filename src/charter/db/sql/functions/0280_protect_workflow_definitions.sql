-- Trigger function: published definitions are immutable (WF-04). Updates are rejected,
-- except tuning a flow step's opt_* columns and a version's registry metadata (commit
-- message, generation, owner); deletes only through delete_flow_and_data().
CREATE OR REPLACE FUNCTION charter._protect_workflow_definitions()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF coalesce(current_setting('charter.deleting_flow', true), '') <> '' THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'CH002',
            MESSAGE = format('Rows of charter.%s belong to a published workflow version and cannot be deleted one by one (WF-04)', TG_TABLE_NAME),
            HINT = 'Publish a new version instead (charter deploy); to remove a whole flow with its runs, call charter.delete_flow_and_data(slug).';
    END IF;
    IF TG_TABLE_NAME = 'flow_steps'
       AND (to_jsonb(NEW) - '{opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay}'::text[])
         = (to_jsonb(OLD) - '{opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay}'::text[]) THEN
        RETURN NEW;  -- tuning options is allowed
    END IF;
    IF TG_TABLE_NAME = 'workflow_versions'
       AND (to_jsonb(NEW) - '{commit_message,generation_id,owner_id}'::text[])
         = (to_jsonb(OLD) - '{commit_message,generation_id,owner_id}'::text[]) THEN
        RETURN NEW;  -- registry metadata, not the definition
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = format('charter.%s rows of published workflow versions are immutable (WF-04)', TG_TABLE_NAME),
        HINT = 'Publish a new version instead: charter deploy MODULE (or start the worker with --deploy). Only the opt_* columns of charter.flow_steps may be tuned in place.';
END;
$$;
