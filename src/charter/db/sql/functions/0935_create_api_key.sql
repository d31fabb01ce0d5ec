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
