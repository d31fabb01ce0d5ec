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
    CONSTRAINT task_errors_pkey PRIMARY KEY (id, org_id)
);
CREATE INDEX task_errors_task_idx ON charter.task_errors (org_id, task_id);
ALTER TABLE charter.task_errors ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.task_errors
    USING (org_id = current_setting('charter.org_id', true));
