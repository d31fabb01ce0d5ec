-- An org id as every call takes it: 1 to 200 characters (an empty one would be a row no
-- claim reaches: the claims walk the orgs from after '').
CREATE OR REPLACE FUNCTION charter._check_org_id(p_org_id text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF p_org_id IS NULL OR length(p_org_id) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = 'An org id of 1 to 200 characters is needed',
            HINT = 'Create the client with org_id=.';
    END IF;
END;
$$;
