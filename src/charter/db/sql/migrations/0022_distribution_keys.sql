-- Every primary and unique key of org data carries org_id, the column a distributed
-- PostgreSQL (Citus) shards by (docs/architecture.md § 15). org_id comes last: every lookup
-- charter makes names the leading columns (an id, a run), so each key still serves it, and
-- each key stays as strict as before, because those leading columns already decide the org
-- (ids are generated, and every row of a run is written with its run's org).
-- runs keeps PRIMARY KEY (id): a run id is chosen by its caller and is unique across orgs
-- until the calls that name a run carry its org (§ 15, "What stands in the way").
-- A worker names a task by its whole key, (id, org_id): claim_tasks returns each task's org
-- and the calls that record outcomes and renew leases take it back. A lookup by id alone
-- under a key on (id, org_id) is no longer sure to read one row, and a plan made on an
-- empty queue then scanned the claim index (a 10,000-task backlog halved the rate).

-- The email process's foreign keys name its keys, so they go first and come back with org_id.
ALTER TABLE charter.send_email_tasks DROP CONSTRAINT send_email_tasks_email_message_id_fkey;
ALTER TABLE charter.send_email_task_scheduled DROP CONSTRAINT send_email_task_scheduled_send_email_task_id_fkey;
ALTER TABLE charter.send_email_task_failed DROP CONSTRAINT send_email_task_failed_send_email_task_id_fkey;
ALTER TABLE charter.send_email_task_succeeded DROP CONSTRAINT send_email_task_succeeded_send_email_task_id_fkey;

-- The flow runtime.
ALTER TABLE charter.step_states DROP CONSTRAINT step_states_pkey,
    ADD CONSTRAINT step_states_pkey PRIMARY KEY (run_id, step_slug, org_id);
ALTER TABLE charter.inbox DROP CONSTRAINT inbox_pkey,
    ADD CONSTRAINT inbox_pkey PRIMARY KEY (run_id, target_step, source_step, spread_index, org_id);
ALTER TABLE charter.tasks DROP CONSTRAINT tasks_pkey,
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id, org_id),
    DROP CONSTRAINT tasks_run_step_index_unique,
    ADD CONSTRAINT tasks_run_step_index_unique UNIQUE (run_id, step_slug, task_index, org_id);
ALTER TABLE charter.step_executions DROP CONSTRAINT step_executions_pkey,
    ADD CONSTRAINT step_executions_pkey PRIMARY KEY (created_at, id, org_id);
ALTER TABLE charter.step_receipts DROP CONSTRAINT step_receipts_pkey,
    ADD CONSTRAINT step_receipts_pkey PRIMARY KEY (run_id, idempotency_key, org_id);
ALTER TABLE charter.flow_event_waits DROP CONSTRAINT flow_event_waits_pkey,
    ADD CONSTRAINT flow_event_waits_pkey PRIMARY KEY (run_id, step_slug, task_index, org_id);

-- Documents and their workflows.
ALTER TABLE charter.document_audit DROP CONSTRAINT document_audit_pkey,
    ADD CONSTRAINT document_audit_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.document_events DROP CONSTRAINT document_events_pkey,
    ADD CONSTRAINT document_events_pkey PRIMARY KEY (created_at, id, org_id);
ALTER TABLE charter.workflow_instances DROP CONSTRAINT workflow_instances_pkey,
    ADD CONSTRAINT workflow_instances_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.instance_waits DROP CONSTRAINT instance_waits_pkey,
    ADD CONSTRAINT instance_waits_pkey PRIMARY KEY (run_id, node_id, org_id);
ALTER TABLE charter.side_effects DROP CONSTRAINT side_effects_pkey,
    ADD CONSTRAINT side_effects_pkey PRIMARY KEY (created_at, id, org_id);
ALTER TABLE charter.task_errors DROP CONSTRAINT task_errors_pkey,
    ADD CONSTRAINT task_errors_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.notifications DROP CONSTRAINT notifications_pkey,
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id, org_id);

-- Approvals.
ALTER TABLE charter.approval_requests DROP CONSTRAINT approval_requests_pkey,
    ADD CONSTRAINT approval_requests_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.approval_decisions DROP CONSTRAINT approval_decisions_pkey,
    ADD CONSTRAINT approval_decisions_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.approval_decisions DROP CONSTRAINT one_decision_per_approver,
    ADD CONSTRAINT one_decision_per_approver UNIQUE (request_id, actor, org_id);
ALTER TABLE charter.approval_delegations DROP CONSTRAINT approval_delegations_pkey,
    ADD CONSTRAINT approval_delegations_pkey PRIMARY KEY (id, org_id);

-- The email process, its foreign keys now naming the org too.
ALTER TABLE charter.email_messages DROP CONSTRAINT email_messages_pkey,
    ADD CONSTRAINT email_messages_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.send_email_tasks DROP CONSTRAINT send_email_tasks_pkey,
    ADD CONSTRAINT send_email_tasks_pkey PRIMARY KEY (id, org_id);
ALTER TABLE charter.send_email_task_scheduled DROP CONSTRAINT send_email_task_scheduled_pkey,
    ADD CONSTRAINT send_email_task_scheduled_pkey PRIMARY KEY (send_email_task_id, attempt, org_id);
ALTER TABLE charter.send_email_task_failed DROP CONSTRAINT send_email_task_failed_pkey,
    ADD CONSTRAINT send_email_task_failed_pkey PRIMARY KEY (send_email_task_id, attempt, org_id);
ALTER TABLE charter.send_email_task_succeeded DROP CONSTRAINT send_email_task_succeeded_pkey,
    ADD CONSTRAINT send_email_task_succeeded_pkey PRIMARY KEY (send_email_task_id, org_id);

ALTER TABLE charter.send_email_tasks ADD CONSTRAINT send_email_tasks_email_message_fkey
    FOREIGN KEY (email_message_id, org_id) REFERENCES charter.email_messages (id, org_id);
ALTER TABLE charter.send_email_task_scheduled ADD CONSTRAINT send_email_task_scheduled_task_fkey
    FOREIGN KEY (send_email_task_id, org_id) REFERENCES charter.send_email_tasks (id, org_id);
ALTER TABLE charter.send_email_task_failed ADD CONSTRAINT send_email_task_failed_task_fkey
    FOREIGN KEY (send_email_task_id, org_id) REFERENCES charter.send_email_tasks (id, org_id);
ALTER TABLE charter.send_email_task_succeeded ADD CONSTRAINT send_email_task_succeeded_task_fkey
    FOREIGN KEY (send_email_task_id, org_id) REFERENCES charter.send_email_tasks (id, org_id);

-- The calls that name a task now take its org (or, an operator's, look it up); claim_tasks
-- returns it. Their new signatures are created with the other functions.
DROP FUNCTION IF EXISTS charter.claim_tasks(text, text[], integer, integer);
DROP FUNCTION IF EXISTS charter.record_outcomes_and_claim(bigint[], uuid[], jsonb[], jsonb[], boolean[], text,
                                                numeric[], jsonb[], text[], integer, integer);
DROP FUNCTION IF EXISTS charter.record_outcomes(bigint[], uuid[], jsonb[], jsonb[], boolean[], text, numeric[], jsonb[]);
DROP FUNCTION IF EXISTS charter.extend_leases(text, bigint[], uuid[], integer);
DROP FUNCTION IF EXISTS charter._record_completions(bigint[], uuid[], jsonb[], numeric[], text);
DROP FUNCTION IF EXISTS charter._complete_one(bigint, uuid, jsonb, text, numeric, jsonb);
DROP FUNCTION IF EXISTS charter._complete_directed(bigint, uuid, jsonb, text, numeric, jsonb);
DROP FUNCTION IF EXISTS charter._fail_one(bigint, uuid, jsonb, boolean, text, numeric);
