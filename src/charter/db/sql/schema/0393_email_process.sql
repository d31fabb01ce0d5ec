-- Seed 003's email example, as written: a message, a root task per logical send, and
-- append-only facts (scheduled, failed, succeeded) from which the supervisor decides.
CREATE TABLE charter.email_messages (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    org_id     text        NOT NULL,
    recipient  text        NOT NULL,
    subject    text        NOT NULL,
    body       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_messages_pkey PRIMARY KEY (id, org_id)
);
ALTER TABLE charter.email_messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.email_messages
    USING (org_id = current_setting('charter.org_id', true));
CREATE TABLE charter.send_email_tasks (
    id               bigint      GENERATED ALWAYS AS IDENTITY,
    org_id           text        NOT NULL,
    email_message_id bigint      NOT NULL,
    max_attempts     integer     NOT NULL DEFAULT 2,
    recheck_after    interval    NOT NULL DEFAULT '5 seconds',
    give_up_at       timestamptz NOT NULL DEFAULT now() + interval '1 day',
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_tasks_pkey PRIMARY KEY (id, org_id),
    CONSTRAINT send_email_tasks_email_message_fkey FOREIGN KEY (email_message_id, org_id)
        REFERENCES charter.email_messages (id, org_id),
    CONSTRAINT send_email_attempts_positive CHECK (max_attempts BETWEEN 1 AND 20)
);
ALTER TABLE charter.send_email_tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.send_email_tasks
    USING (org_id = current_setting('charter.org_id', true));
CREATE TABLE charter.send_email_task_scheduled (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL,
    attempt           integer     NOT NULL,
    task_id           bigint      NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_scheduled_pkey PRIMARY KEY (send_email_task_id, attempt, org_id),
    CONSTRAINT send_email_task_scheduled_task_fkey FOREIGN KEY (send_email_task_id, org_id)
        REFERENCES charter.send_email_tasks (id, org_id)
);
ALTER TABLE charter.send_email_task_scheduled ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.send_email_task_scheduled
    USING (org_id = current_setting('charter.org_id', true));
CREATE TABLE charter.send_email_task_failed (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL,
    attempt           integer     NOT NULL,
    error             text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_failed_pkey PRIMARY KEY (send_email_task_id, attempt, org_id),
    CONSTRAINT send_email_task_failed_task_fkey FOREIGN KEY (send_email_task_id, org_id)
        REFERENCES charter.send_email_tasks (id, org_id)
);
ALTER TABLE charter.send_email_task_failed ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.send_email_task_failed
    USING (org_id = current_setting('charter.org_id', true));
CREATE TABLE charter.send_email_task_succeeded (
    org_id            text        NOT NULL,
    send_email_task_id bigint     NOT NULL,
    attempt           integer     NOT NULL,
    provider_response jsonb       NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT send_email_task_succeeded_pkey PRIMARY KEY (send_email_task_id, org_id),
    CONSTRAINT send_email_task_succeeded_task_fkey FOREIGN KEY (send_email_task_id, org_id)
        REFERENCES charter.send_email_tasks (id, org_id)
);
ALTER TABLE charter.send_email_task_succeeded ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.send_email_task_succeeded
    USING (org_id = current_setting('charter.org_id', true));
