-- In-app notifications: one row per user per effect (the effect's dedup, again here).
CREATE TABLE charter.notifications (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    user_id    text        NOT NULL,
    effect_id  bigint      NOT NULL,
    run_id     text,
    node_id    text,
    subject    text,
    body       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    read_at    timestamptz,
    CONSTRAINT notifications_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT notifications_once UNIQUE (org_id, effect_id, user_id)
);
CREATE INDEX notifications_inbox_idx ON charter.notifications (org_id, user_id, created_at DESC);
ALTER TABLE charter.notifications ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.notifications
    USING (org_id = current_setting('charter.org_id', true));
