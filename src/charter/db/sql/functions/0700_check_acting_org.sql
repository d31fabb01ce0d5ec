-- The org a call acts for, refused with the reason: an org id that is not 1 to 200
-- characters, or one other than the transaction's charter.org_id when that is set (a caller
-- that set it for row-level security cannot act for another org). _acting_org calls it only
-- when its own test fails.
CREATE OR REPLACE FUNCTION charter._check_acting_org(p_org_id text)
RETURNS text
LANGUAGE plpgsql
STABLE
SET search_path = ''
AS $$
DECLARE
    v_session text := nullif(current_setting('charter.org_id', true), '');
BEGIN
    PERFORM charter._check_org_id(p_org_id);
    IF v_session IS NOT NULL AND v_session <> p_org_id THEN
        RAISE EXCEPTION USING ERRCODE = 'CH038',
            MESSAGE = format('This transaction is scoped to org %L, not %L', v_session, p_org_id),
            HINT = 'Use one org per transaction: the client''s org_id must match charter.org_id.';
    END IF;
    RETURN p_org_id;
END;
$$;
