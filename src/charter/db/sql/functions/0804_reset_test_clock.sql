-- Puts the org's test clock back to the server's time (development only, like advancing it).
CREATE OR REPLACE FUNCTION charter.reset_test_clock(p_org_id text)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    PERFORM charter._check_test_clock();
    DELETE FROM charter.test_clock AS c WHERE c.org_id = charter._acting_org(p_org_id);
    RETURN now();
END;
$$;
