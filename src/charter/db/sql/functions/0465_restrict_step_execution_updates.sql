-- Trigger function: evidence rows only move forward (seed 002 N1 and § Strict State
-- Machine). A row written as running (a node that waits: timer, event, delivery, approval,
-- a resting state) may become completed, failed, skipped or cancelled once, with its output
-- and error; its identity (run, node, token, entity version, key, actor, type) never
-- changes, and nothing else may be updated or deleted (see _protect_evidence), but by
-- delete_flow_and_data and by retention (a finished flow run's rows, never an instance's).
CREATE OR REPLACE FUNCTION charter._restrict_step_execution_updates()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.status = 'running'
       AND NEW.status IN ('completed', 'failed', 'skipped', 'cancelled')
       AND (to_jsonb(NEW) - '{status,terminal,output,error,finished_at}'::text[])
         = (to_jsonb(OLD) - '{status,terminal,output,error,finished_at}'::text[]) THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' AND coalesce(current_setting('charter.deleting_flow', true), '') <> '' THEN
        RETURN OLD;
    END IF;
    -- Retention (run_maintenance) forgets finished flow runs; a document instance's evidence
    -- is kept for good.
    IF TG_OP = 'DELETE' AND coalesce(current_setting('charter.retention', true), '') = 'on' THEN
        IF charter._is_instance(OLD.run_id, OLD.org_id) THEN
            RAISE EXCEPTION USING ERRCODE = 'CH002',
                MESSAGE = format('charter.step_executions: the evidence of document instance %s is kept for good', OLD.run_id),
                HINT = 'Retention forgets flow runs only; archive old document evidence with charter maintenance --archive-before.';
        END IF;
        RETURN OLD;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = CASE WHEN TG_OP = 'UPDATE' AND OLD.status = 'running'
            THEN format('charter.step_executions: a running row may only finish (completed, failed, skipped, cancelled) with its identity unchanged, not become %s', NEW.status)
            ELSE format('charter.step_executions is append-only evidence: a %s row cannot be %s', OLD.status,
                        CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed' END) END,
        HINT = 'Record what happened as new rows; retention forgets finished flow runs, and old document evidence may be archived (charter maintenance --archive-before).';
END;
$$;
