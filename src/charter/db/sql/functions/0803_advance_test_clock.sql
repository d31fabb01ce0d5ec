-- Moves the org's test clock forward; other orgs' time does not move. Refused unless the
-- transaction says it comes from a development client (SET LOCAL charter.mode =
-- 'development'; charter's Python client does so only in development mode) — and only the
-- schema's owner may call it at all.
CREATE OR REPLACE FUNCTION charter.advance_test_clock(p_org_id text, p_by interval)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    v_org text;
BEGIN
    PERFORM charter._check_test_clock();
    v_org := charter._acting_org(p_org_id);
    IF p_by IS NULL OR p_by < interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH047', MESSAGE = format('The test clock only moves forward, not by %s', p_by),
            HINT = 'Pass a positive duration.';
    END IF;
    INSERT INTO charter.test_clock AS c (org_id, ahead) VALUES (v_org, p_by)
    ON CONFLICT (org_id) DO UPDATE SET ahead = c.ahead + p_by, updated_at = now();
    RETURN charter._now(v_org);
END;
$$;
