-- A run is named by its org and its id: its key is (id, org_id), the last key of org data
-- without the column a distributed PostgreSQL (Citus) shards by (docs/architecture.md § 15).
-- Two orgs may now use the same run id, each for its own run. Every statement that reads a
-- run's rows names the run's org as well as its id, so that it reads one org's rows (one
-- shard once distributed). The engine's helpers take the org next to the run id, and the
-- calls that name a run take it as an optional last argument (looked up by id when left
-- out). Their old signatures go; the new ones are created from functions/.
ALTER TABLE charter.runs DROP CONSTRAINT runs_pkey,
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id, org_id);

-- A task's idempotency key names its org too (for orgs other than 'default', whose keys stay
-- as they were): two orgs' runs of one id must not share a key with a system both call. A
-- task of another org that is retried after this migration gets its new key: let workers
-- finish what they hold (stop them) before migrating.
DROP FUNCTION IF EXISTS charter._idempotency_key(text, text, integer);
DROP FUNCTION IF EXISTS charter._start_step(text, text, jsonb);
DROP FUNCTION IF EXISTS charter._complete_step(text, text, jsonb);
DROP FUNCTION IF EXISTS charter._fail_run(text, text, jsonb);
DROP FUNCTION IF EXISTS charter._step_resume(text, text, integer, text, jsonb);
DROP FUNCTION IF EXISTS charter._retry_instance(text);
DROP FUNCTION IF EXISTS charter.get_run(text);
DROP FUNCTION IF EXISTS charter.get_runs(text[]);
DROP FUNCTION IF EXISTS charter.cancel_run(text);
DROP FUNCTION IF EXISTS charter.retry_run(text);
DROP FUNCTION IF EXISTS charter.run_projection(text);
DROP FUNCTION IF EXISTS charter.compute_run_projection(text);
DROP FUNCTION IF EXISTS charter.rebuild_run_projection(text);
DROP FUNCTION IF EXISTS charter._instance_projection(text);
DROP FUNCTION IF EXISTS charter._finish_instance(text, text, jsonb, text);
DROP FUNCTION IF EXISTS charter._drain(text);
DROP FUNCTION IF EXISTS charter._waiting_for(text, jsonb);
DROP FUNCTION IF EXISTS charter.instance_steps(text);
DROP FUNCTION IF EXISTS charter.compute_instance_projection(text);
DROP FUNCTION IF EXISTS charter.rebuild_instance_projection(text);
DROP FUNCTION IF EXISTS charter.instance_position(text);
-- A side effect's answer names its org too (claim_side_effects returns it).
DROP FUNCTION IF EXISTS charter.finish_side_effect(bigint, text, jsonb);
DROP FUNCTION IF EXISTS charter.confirm_side_effect(bigint, jsonb);
DROP FUNCTION IF EXISTS charter.extend_side_effect_leases(text, bigint[], integer);
DROP FUNCTION IF EXISTS charter.deliver_in_app(bigint, text);
DROP FUNCTION IF EXISTS charter.record_task_error(bigint, text, text, text, jsonb);
-- A claimed document event comes back with its org (apply_document_events takes it).
DROP FUNCTION IF EXISTS charter.claim_document_events(text, integer, integer);
DROP FUNCTION IF EXISTS charter.finish_action_task(text, text, text, jsonb, jsonb, boolean, text[], jsonb, integer);
DROP FUNCTION IF EXISTS charter.finish_action_task(text, text, text, jsonb, jsonb, boolean, integer);
-- The email process's helpers take the email task's org (optional: seed 003 names them by id).
DROP FUNCTION IF EXISTS charter.has_send_email_task_succeeded(bigint);
DROP FUNCTION IF EXISTS charter.count_send_email_task_failures(bigint);
DROP FUNCTION IF EXISTS charter.count_send_email_task_scheduled(bigint);
DROP FUNCTION IF EXISTS charter.kickoff_send_email_task(bigint, timestamptz);
