-- A user's API key is bound to the directory entry it was made for (issue #37): removing the
-- user ends the entry, and adding a user of the same id later makes a new entry that the old
-- keys do not name, so they stay dead.

ALTER TABLE charter.directory_users ADD COLUMN entry_id uuid NOT NULL DEFAULT gen_random_uuid();
COMMENT ON COLUMN charter.directory_users.entry_id IS
    'This entry of the user: a user removed and added again gets a new one, so keys made for the old entry do not work.';

ALTER TABLE charter.api_keys ADD COLUMN directory_entry uuid;
COMMENT ON COLUMN charter.api_keys.directory_entry IS
    'The directory entry (directory_users.entry_id) of the user the key acts as; null for a service account.';

-- Keys of users in the directory now are bound to their entries; keys of users removed before
-- this migration could be revived by re-adding the user, so they are revoked.
UPDATE charter.api_keys AS k SET directory_entry = u.entry_id
  FROM charter.directory_users AS u
 WHERE k.actor NOT LIKE 'service:%' AND u.org_id = k.org_id AND u.user_id = k.actor;
UPDATE charter.api_keys AS k SET revoked_at = now()
 WHERE k.actor NOT LIKE 'service:%' AND k.directory_entry IS NULL AND k.revoked_at IS NULL;
