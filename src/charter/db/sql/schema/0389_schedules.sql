CREATE TABLE charter.schedules (
    org_id       text        NOT NULL,
    name         text        NOT NULL,
    cron         text        NOT NULL,
    timezone     text        NOT NULL DEFAULT 'UTC',
    target       jsonb       NOT NULL,
    missed       text        NOT NULL DEFAULT 'latest',
    next_at      timestamptz NOT NULL,
    last_tick_at timestamptz,
    last_result  jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedules_pkey PRIMARY KEY (org_id, name),
    CONSTRAINT schedule_missed_is_known CHECK (missed IN ('latest', 'all', 'skip'))
);
CREATE INDEX schedules_due_idx ON charter.schedules (next_at);
