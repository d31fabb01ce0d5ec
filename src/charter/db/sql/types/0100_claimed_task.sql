-- A claimed task: what claim_tasks (and record_outcomes_and_claim, which ends with a claim)
-- hands a worker for each task it claimed. The run input, the dependencies' outputs by name
-- (single steps) or the element (map steps), the idempotency key and the timeout, for a
-- step that waited what it waited for (resume), and the task's org: the worker names a task
-- by its whole key, (task_id, org_id), when it records the outcome or renews the lease.
CREATE TYPE charter.claimed_task AS (
    task_id bigint,
    run_id text,
    flow_slug text,
    step_slug text,
    task_index integer,
    attempt integer,
    delivery_token uuid,
    idempotency_key text,
    run_input jsonb,
    inputs jsonb,
    item jsonb,
    timeout_seconds integer,
    resume jsonb,
    org_id text
);
