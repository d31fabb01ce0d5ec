-- The claimed task's columns become one composite type (types/0100_claimed_task.sql),
-- instead of the same RETURNS TABLE list written in claim_tasks, _claim_tasks_of_org and
-- record_outcomes_and_claim. Same columns in the same order, so callers see no change.
-- A function's return type cannot be replaced, so the three are dropped here; their function
-- files create them again in this same transaction (every function file is applied after
-- a migration), and the grants file grants them again.
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

DROP FUNCTION IF EXISTS charter.record_outcomes_and_claim(
    bigint[], uuid[], jsonb[], jsonb[], boolean[], text, numeric[], jsonb[], text[], integer,
    integer, text[]);
DROP FUNCTION IF EXISTS charter.claim_tasks(text, text[], integer, integer);
DROP FUNCTION IF EXISTS charter._claim_tasks_of_org(text, text, text[], integer, integer);
