CREATE TABLE charter.directory_users (
    org_id     text        NOT NULL,
    user_id    text        NOT NULL,
    roles      text[]      NOT NULL DEFAULT '{}',
    manager_id text,
    email      text,
    phone      text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    entry_id   uuid        NOT NULL DEFAULT gen_random_uuid(),
    CONSTRAINT directory_users_pkey PRIMARY KEY (org_id, user_id),
    CONSTRAINT user_id_is_not_reserved
        CHECK (user_id <> 'system' AND user_id NOT LIKE 'service:%' AND length(user_id) BETWEEN 1 AND 200)
);

COMMENT ON TABLE charter.directory_users IS
    'The org directory: users, their roles and manager, email and phone. Roles come from here, never from the caller.';

COMMENT ON COLUMN charter.directory_users.entry_id IS
    'This entry of the user: a user removed and added again gets a new one, so keys made for the old entry do not work.';

CREATE INDEX directory_users_roles_idx ON charter.directory_users USING gin (roles);
