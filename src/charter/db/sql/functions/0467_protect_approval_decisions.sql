-- Trigger function: a decision is an append-only fact (WF-03). Its one later change is being
-- consumed by a gate (applied_at, applied_by) or voided by a change of the document
-- (voided_at, voided_version) — each once, never both; nothing else changes, nothing is
-- deleted.
CREATE OR REPLACE FUNCTION charter._protect_approval_decisions()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.applied_at IS NULL AND OLD.voided_at IS NULL
       AND (to_jsonb(NEW) - '{applied_at,applied_by,voided_at,voided_version}'::text[])
         = (to_jsonb(OLD) - '{applied_at,applied_by,voided_at,voided_version}'::text[]) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'CH002',
        MESSAGE = CASE WHEN TG_OP = 'UPDATE' AND OLD.applied_at IS NOT NULL
                       THEN format('Approval decision %s was applied at %s and can never be used again', OLD.id, OLD.applied_at)
                       WHEN TG_OP = 'UPDATE' AND OLD.voided_at IS NOT NULL
                       THEN format('Approval decision %s was voided by version %s', OLD.id, OLD.voided_version)
                       ELSE format('charter.approval_decisions is append-only: a decision cannot be %s',
                                   CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed' END) END,
        HINT = 'Ask for a new decision on the document''s current version.';
END;
$$;
