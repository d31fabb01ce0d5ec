-- Side effects exactly once (seed 003 with seed 002 WF-10/11). The side-effects outbox is
-- also seed 003's task queue: one table, one claim (SKIP LOCKED, lease, worker fencing),
-- two kinds of row —
--   'effect': an instance's webhook or notification (or the app's webhook); charter retries
--             it with backoff and dead-letters it after its last attempt;
--   'task':   a seed 003 task (db_function, email, sms, webhook) that a supervisor enqueued;
--             the worker runs it once and never retries: supervisors decide from facts.
ALTER TABLE charter.side_effects ALTER COLUMN run_id DROP NOT NULL;
ALTER TABLE charter.side_effects ALTER COLUMN node_id DROP NOT NULL;
ALTER TABLE charter.side_effects ADD COLUMN kind text NOT NULL DEFAULT 'effect';
ALTER TABLE charter.side_effects ADD COLUMN dequeued_at timestamptz;
-- Who re-drove or dropped a dead letter, when, and the error it had then (oldest first).
ALTER TABLE charter.side_effects ADD COLUMN interventions jsonb NOT NULL DEFAULT '[]';
ALTER TABLE charter.side_effects
    ADD CONSTRAINT side_effect_kind_is_known CHECK (kind IN ('effect', 'task'));
ALTER TABLE charter.side_effects DROP CONSTRAINT effect_type_is_known;
ALTER TABLE charter.side_effects ADD CONSTRAINT effect_type_is_known
    CHECK (effect_type IN ('webhook', 'notification', 'email', 'sms', 'db_function'));
CREATE INDEX side_effects_dead_letter_idx ON charter.side_effects (org_id, completed_at)
    WHERE status = 'dead_letter';
-- Answers find a row by its id alone (the primary key leads with created_at).
CREATE INDEX side_effects_id_idx ON charter.side_effects (id);

-- Operational errors of the worker and of handlers (seed 003 queues.error), append-only.
CREATE TABLE charter.task_errors (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    task_id    bigint,
    task_type  text,
    worker_id  text,
    stage      text        NOT NULL,
    error      text        NOT NULL,
    context    jsonb       NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT task_errors_pkey PRIMARY KEY (id)
);
CREATE INDEX task_errors_task_idx ON charter.task_errors (org_id, task_id);
ALTER TABLE charter.task_errors ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.task_errors
    USING (org_id = current_setting('charter.org_id', true));

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
    CONSTRAINT notifications_pkey PRIMARY KEY (id),
    CONSTRAINT notifications_once UNIQUE (org_id, effect_id, user_id)
);
CREATE INDEX notifications_inbox_idx ON charter.notifications (org_id, user_id, created_at DESC);
ALTER TABLE charter.notifications ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.notifications
    USING (org_id = current_setting('charter.org_id', true));

-- Seed 003's email example, as written: a message, a root task per logical send, and
-- append-only facts (scheduled, failed, succeeded) from which the supervisor decides.
CREATE TABLE charter.email_messages (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    recipient  text        NOT NULL,
    subject    text        NOT NULL,
    body       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_messages_pkey PRIMARY KEY (id)
);
CREATE TABLE charter.send_email_tasks (
    id               bigint      GENERATED ALWAYS AS IDENTITY,
    org_id           text        NOT NULL,
    email_message_id bigint      NOT NULL REFERENCES charter.email_messages (id),
    max_attempts     integer     NOT NULL DEFAULT 2,
    recheck_after    interval    NOT NULL DEFAULT '5 seconds',
    give_up_at       timestamptz NOT NULL DEFAULT now() + interval '1 day',
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_tasks_pkey PRIMARY KEY (id),
    CONSTRAINT send_email_attempts_positive CHECK (max_attempts BETWEEN 1 AND 20)
);
CREATE TABLE charter.send_email_task_scheduled (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL REFERENCES charter.send_email_tasks (id),
    attempt           integer     NOT NULL,
    task_id           bigint      NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_scheduled_pkey PRIMARY KEY (send_email_task_id, attempt)
);
CREATE TABLE charter.send_email_task_failed (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL REFERENCES charter.send_email_tasks (id),
    attempt           integer     NOT NULL,
    error             text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_failed_pkey PRIMARY KEY (send_email_task_id, attempt)
);
CREATE TABLE charter.send_email_task_succeeded (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL REFERENCES charter.send_email_tasks (id),
    attempt           integer     NOT NULL,
    provider_response jsonb       NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_succeeded_pkey PRIMARY KEY (send_email_task_id)
);
ALTER TABLE charter.email_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.send_email_tasks ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.send_email_task_scheduled ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.send_email_task_failed ENABLE ROW LEVEL SECURITY;
ALTER TABLE charter.send_email_task_succeeded ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.email_messages
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.send_email_tasks
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.send_email_task_scheduled
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.send_email_task_failed
    USING (org_id = current_setting('charter.org_id', true));
CREATE POLICY org_isolation ON charter.send_email_task_succeeded
    USING (org_id = current_setting('charter.org_id', true));
