-- Refuses a run input or step output nested more than 100 levels deep (jsonpath levels:
-- the value itself is level 0), the same limit charter.payloads.MAX_DEPTH applies in Python:
-- deeper values would poison every worker that has to decode them.
CREATE OR REPLACE FUNCTION charter._check_payload(p_value jsonb, p_what text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = ''
AS $$
BEGIN
    IF jsonb_path_exists(p_value, 'strict $.**{101}') THEN
        RAISE EXCEPTION USING ERRCODE = 'CH008',
            MESSAGE = format('%s nests arrays and objects more than 100 levels deep; charter accepts at most 100', p_what),
            HINT = 'Flatten it, or store the document elsewhere and pass a reference.';
    END IF;
END;
$$;
