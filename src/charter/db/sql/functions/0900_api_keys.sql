-- API keys (the ops surface): made and revoked by the schema's owner (`charter keys`),
-- checked by the server on every request (authenticate_api_key, granted to charter_app).
-- A key is 'chk_<id>_<secret>'; only sha256 of the whole key is stored. A platform key
-- (p_platform, charter keys create --platform) acts as a service account and may also
-- publish contracts, which are the platform's rather than any org's. A user's key is bound
-- to the directory entry it was made for (directory_users.entry_id): it works while that
-- entry is there, so removing the user ends it for good, even if a user of the same id is
-- added again later.

CREATE OR REPLACE FUNCTION charter.create_api_key(p_org_id text, p_actor text, p_label text DEFAULT NULL,
                                                  p_created_by text DEFAULT NULL,
                                                  p_platform boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    v_org    text := charter._acting_org(p_org_id);
    v_id     text := substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    v_secret text;
    v_entry  uuid;
BEGIN
    IF p_actor IS NULL OR p_actor !~ '^(service:)?[A-Za-z0-9_.@-]{1,200}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH063',
            MESSAGE = format('A key acts as a directory user or service:NAME, not %L', p_actor),
            HINT = 'Pass --actor u-2 (a user of the org''s directory) or --actor service:billing.';
    END IF;
    IF coalesce(p_platform, false) AND p_actor NOT LIKE 'service:%' THEN
        RAISE EXCEPTION USING ERRCODE = 'CH063',
            MESSAGE = format('A platform key acts as a service account, not as %L', p_actor),
            HINT = 'Pass --actor service:NAME (or leave --actor out: service:platform).';
    END IF;
    IF p_actor NOT LIKE 'service:%' THEN
        SELECT u.entry_id INTO v_entry FROM charter.directory_users AS u
         WHERE u.org_id = v_org AND u.user_id = p_actor;
    END IF;
    IF p_actor NOT LIKE 'service:%' AND v_entry IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'CH063',
            MESSAGE = format('Org %s has no user %L in its directory', v_org, p_actor),
            HINT = 'Add the user first (client.directory.put_user), or make a key for service:NAME.';
    END IF;
    v_secret := 'chk_' || v_id || '_' || encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text
                                                                 || clock_timestamp()::text, 'UTF8')), 'hex');
    INSERT INTO charter.api_keys (id, org_id, actor, label, secret_hash, created_by, platform, directory_entry)
    VALUES (v_id, v_org, p_actor, p_label, encode(sha256(convert_to(v_secret, 'UTF8')), 'hex'), p_created_by,
            coalesce(p_platform, false), v_entry);
    RETURN jsonb_build_object('id', v_id, 'orgId', v_org, 'actor', p_actor, 'label', p_label, 'key', v_secret,
                              'platform', coalesce(p_platform, false));
END;
$$;

CREATE OR REPLACE FUNCTION charter.list_api_keys(p_org_id text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT jsonb_build_object('id', k.id, 'orgId', k.org_id, 'actor', k.actor, 'label', k.label,
                              'createdAt', k.created_at, 'createdBy', k.created_by,
                              'lastUsedAt', k.last_used_at, 'revokedAt', k.revoked_at, 'platform', k.platform)
      FROM charter.api_keys AS k
     WHERE p_org_id IS NULL OR k.org_id = p_org_id
     ORDER BY k.org_id, k.created_at
$$;

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
