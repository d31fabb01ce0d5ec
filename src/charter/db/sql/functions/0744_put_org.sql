CREATE OR REPLACE FUNCTION charter.put_org(p_org_id text, p_data jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org text := charter._acting_org(p_org_id);
BEGIN
    IF jsonb_typeof(p_data) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH022', MESSAGE = 'Org data must be a JSON object',
            HINT = 'Pass {"key": value, ...}; expressions read it as org.key.';
    END IF;
    INSERT INTO charter.directory_orgs AS o (org_id, data) VALUES (v_org, p_data)
    ON CONFLICT (org_id) DO UPDATE SET data = EXCLUDED.data, updated_at = now();
    RETURN p_data;
END;
$$;
