-- Who a key is: its org and actor, or NULL for an unknown or revoked key. Marks it used
-- (at most once a minute, so a busy key does not write on every request).
CREATE OR REPLACE FUNCTION charter.authenticate_api_key(p_key text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_key   charter.api_keys;
    v_roles text[];
BEGIN
    SELECT * INTO v_key FROM charter.api_keys AS k
     WHERE k.secret_hash = encode(sha256(convert_to(coalesce(p_key, ''), 'UTF8')), 'hex') AND k.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_key.actor NOT LIKE 'service:%' THEN
        -- A user's key works while the directory entry it was made for is there: not for
        -- a user of the same id added again after a removal.
        SELECT u.roles INTO v_roles FROM charter.directory_users AS u
         WHERE u.org_id = v_key.org_id AND u.user_id = v_key.actor AND u.entry_id = v_key.directory_entry;
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END IF;
    IF v_key.last_used_at IS NULL OR v_key.last_used_at < now() - interval '1 minute' THEN
        UPDATE charter.api_keys AS k SET last_used_at = now() WHERE k.id = v_key.id;
    END IF;
    -- Administration over HTTP (definitions, cancelling runs, force-failing, dropping dead
    -- letters): service accounts, and users with the directory role admin. Publishing a
    -- contract: platform keys only.
    RETURN jsonb_build_object('id', v_key.id, 'orgId', v_key.org_id, 'actor', v_key.actor,
                              'admin', v_key.actor LIKE 'service:%' OR 'admin' = ANY (v_roles),
                              'platform', v_key.platform);
END;
$$;
