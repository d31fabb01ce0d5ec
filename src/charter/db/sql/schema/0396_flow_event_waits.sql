-- A wait_event step's task waiting for its event: send_event attaches the event and makes
-- the task claimable now.
CREATE TABLE charter.flow_event_waits (
    run_id      text        NOT NULL,
    step_slug   text        NOT NULL,
    task_index  integer     NOT NULL DEFAULT 0,
    org_id      text        NOT NULL,
    event_key   text        NOT NULL,
    timeout_at  timestamptz,
    event       jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT flow_event_waits_pkey PRIMARY KEY (run_id, step_slug, task_index, org_id)
);
CREATE INDEX flow_event_waits_key_idx ON charter.flow_event_waits (org_id, event_key)
    WHERE event IS NULL;
ALTER TABLE charter.flow_event_waits ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON charter.flow_event_waits
    USING (org_id = current_setting('charter.org_id', true));
