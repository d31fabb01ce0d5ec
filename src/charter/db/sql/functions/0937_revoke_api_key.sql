CREATE OR REPLACE FUNCTION charter.revoke_api_key(p_id text)
RETURNS boolean
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    WITH revoked AS (
        UPDATE charter.api_keys AS k SET revoked_at = now() WHERE k.id = p_id AND k.revoked_at IS NULL
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM revoked)
$$;
