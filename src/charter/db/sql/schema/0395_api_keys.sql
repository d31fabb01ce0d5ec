-- API keys for `charter serve` (the ops surface): each acts in one org as one directory
-- user or a service:NAME account. Only a hash of the secret is kept; the secret is shown
-- once, when the key is made. A platform key (charter keys create --platform) may also
-- publish contracts, which are the platform's, not an org's. A user's key is bound to the
-- directory entry it was made for: re-adding a removed user does not revive it.
CREATE TABLE charter.api_keys (
    id           text        NOT NULL,
    org_id       text        NOT NULL,
    actor        text        NOT NULL,
    label        text,
    secret_hash  text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    created_by   text,
    last_used_at timestamptz,
    revoked_at   timestamptz,
    platform     boolean     NOT NULL DEFAULT false,
    directory_entry uuid,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_secret_hash_key UNIQUE (secret_hash)
);
COMMENT ON COLUMN charter.api_keys.directory_entry IS
    'The directory entry (directory_users.entry_id) of the user the key acts as; null for a service account.';
CREATE INDEX api_keys_org_idx ON charter.api_keys (org_id, created_at);
ALTER TABLE charter.api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.api_keys
    USING (org_id = current_setting('charter.org_id', true));
