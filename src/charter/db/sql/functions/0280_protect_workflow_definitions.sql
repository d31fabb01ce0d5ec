-- Trigger function: published definitions are immutable (WF-04). Updates are rejected,
-- except tuning the opt_* columns of a flow step or a flow version, a version's registry
-- metadata (commit message, generation, owner), a new artifact of the same shape stored by
-- store_recompiled(), editing a draft org definition, and archiving a definition; deletes
-- only through delete_flow_and_data().
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
       AND (to_jsonb(NEW) - '{opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay,opt_limits}'::text[])
         = (to_jsonb(OLD) - '{opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay,opt_limits}'::text[]) THEN
        RETURN NEW;  -- tuning options is allowed
    END IF;
    IF TG_TABLE_NAME = 'workflow_versions'
       AND (to_jsonb(NEW) - '{commit_message,generation_id,owner_id,opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay,opt_limits}'::text[])
         = (to_jsonb(OLD) - '{commit_message,generation_id,owner_id,opt_max_attempts,opt_base_delay,opt_timeout,opt_start_delay,opt_limits}'::text[]) THEN
        RETURN NEW;  -- registry metadata and tunable options, not the definition
    END IF;
    IF TG_TABLE_NAME = 'workflow_versions' AND to_jsonb(OLD)->>'status' = 'draft' THEN
        RETURN NEW;  -- a draft org definition is editable until it is published
    END IF;
    IF TG_TABLE_NAME = 'workflow_versions'
       AND to_jsonb(NEW)->>'status' = 'archived'
       AND (to_jsonb(NEW) - '{status,updated_at}'::text[]) = (to_jsonb(OLD) - '{status,updated_at}'::text[]) THEN
        RETURN NEW;  -- archiving a definition changes its status only
    END IF;
    IF TG_TABLE_NAME = 'workflow_versions'
       AND current_setting('charter.recompiling', true) = to_jsonb(OLD)->>'id'
       AND (to_jsonb(NEW) - '{compiled,compiled_hash,compiler_version}'::text[])
         = (to_jsonb(OLD) - '{compiled,compiled_hash,compiler_version}'::text[]) THEN
        RETURN NEW;  -- the same shape, compiled again by a newer compiler
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = format('charter.%s rows of published workflow versions are immutable (WF-04)', TG_TABLE_NAME),
        HINT = 'Publish a new version instead: charter deploy MODULE (or start the worker with --deploy). Only the opt_* columns of charter.flow_steps and charter.workflow_versions may be tuned in place.';
END;
$$;
