-- Trigger function: statuses only move forward (seed 002 N1): an instance's running →
-- paused, completed, failed, cancelled and paused → running, cancelled; an outbox row's
-- pending → processing → completed | failed, failed → processing | pending | dead_letter,
-- processing → pending | failed | dead_letter, and the admin's dead_letter → pending
-- (re-driven) or cancelled (dropped).
-- Terminal states are final, except through the explicit, recorded admin calls that set
-- charter.admin_override (retry_run out of failed).
CREATE OR REPLACE FUNCTION charter._restrict_status_regression()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_allowed text[];
BEGIN
    IF NEW.status = OLD.status THEN
        RETURN NEW;
    END IF;
    IF coalesce(current_setting('charter.admin_override', true), '') = 'on' THEN
        RETURN NEW;
    END IF;
    v_allowed := CASE TG_TABLE_NAME
        WHEN 'workflow_instances' THEN CASE OLD.status
            WHEN 'running' THEN ARRAY['paused', 'completed', 'failed', 'cancelled']
            WHEN 'paused' THEN ARRAY['running', 'cancelled'] END
        ELSE CASE OLD.status
            WHEN 'pending' THEN ARRAY['processing', 'cancelled']
            WHEN 'processing' THEN ARRAY['completed', 'failed', 'dead_letter', 'pending', 'cancelled']
            WHEN 'failed' THEN ARRAY['processing', 'pending', 'dead_letter', 'cancelled', 'completed']
            WHEN 'dead_letter' THEN ARRAY['pending', 'cancelled'] END
        END;
    IF NEW.status = ANY (coalesce(v_allowed, '{}')) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = format('charter.%s: status %s cannot become %s (terminal states are final)',
                         regexp_replace(TG_TABLE_NAME, '_(default|\d{4}_\d{2})$', ''), OLD.status, NEW.status),
        HINT = 'Use the recorded admin calls (retry_run; a dead letter back to pending) to resume work.';
END;
$$;
