-- Named queries used by charter's Python code. Each starts with `-- name: NAME`.

-- name: migrate_lock
-- Serialises concurrent `charter migrate` runs; released when the transaction ends. The key
-- is charter._lock_key('migration', 'schema'), written out: the schema may not exist yet.
SELECT pg_advisory_xact_lock(hashtextextended('migration:schema', 0));

-- name: can_migrate
-- The schema's owner (or a member of its role) may migrate; before the schema exists, whoever
-- may create schemas in this database.
SELECT CASE WHEN n.oid IS NULL THEN has_database_privilege(current_database(), 'CREATE')
            ELSE pg_has_role(current_user, n.nspowner, 'MEMBER') END
  FROM (SELECT 1) AS one
  LEFT JOIN pg_namespace AS n ON n.nspname = 'charter';

-- name: role_privileges
-- Who the session is, whether it is a superuser, and whether it may change schema charter
-- (as can_migrate): `charter serve` refuses such a role unless told --as-owner.
SELECT current_user::text,
       r.rolsuper,
       CASE WHEN n.oid IS NULL THEN has_database_privilege(current_database(), 'CREATE')
            ELSE pg_has_role(current_user, n.nspowner, 'MEMBER') END
  FROM pg_roles AS r
  LEFT JOIN pg_namespace AS n ON n.nspname = 'charter'
 WHERE r.rolname = current_user;

-- name: set_session
-- Settings a pooled connection makes for its session when it connects (StoreOptions.session).
SELECT set_config(s.name, s.value, false) FROM unnest(%s::text[], %s::text[]) AS s(name, value);

-- name: schema_state
-- Every applied file with its checksum, for a role that may not read the ledger.
SELECT charter.schema_state();

-- name: migrations_table_exists
-- Whether the migration ledger exists yet (it does not before the first migrate).
SELECT to_regclass('charter.schema_migrations') IS NOT NULL AS present;

-- name: applied_migrations
-- The migration ledger: every applied migration and repeatable file with its checksum.
SELECT name, kind, version, checksum FROM charter.schema_migrations ORDER BY name;

-- name: record_migration
-- Records a file as applied (again) with its checksum and the charter version that applied it.
INSERT INTO charter.schema_migrations (name, kind, version, checksum, charter_version)
VALUES (%(name)s, %(kind)s, %(version)s, %(checksum)s, %(charter_version)s)
ON CONFLICT (name) DO UPDATE
   SET checksum = EXCLUDED.checksum,
       charter_version = EXCLUDED.charter_version,
       applied_at = now();

-- name: forget_unshipped_files
-- Drops the ledger rows of repeatable files this charter no longer ships (renamed or
-- split: what they made lives on in the files that replaced them).
DELETE FROM charter.schema_migrations
 WHERE kind = 'repeatable' AND NOT (name = ANY(%(shipped)s::text[]));

-- name: ensure_flow_compiled
-- Makes sure the database has exactly this flow (seed 000), per mode.
SELECT charter.ensure_flow_compiled(%(slug)s, %(shape)s, %(mode)s, %(compiled)s);

-- name: deploy_flow
-- Publishes a flow's shape as its new current version when it differs.
SELECT charter.deploy_flow(%(slug)s, %(shape)s, %(compiled)s);

-- name: ensure_partitions
-- Creates the monthly partitions of the evidence tables for this month and the next ones.
SELECT charter.ensure_partitions();

-- name: start_run
-- Starts a run of a flow's current version (an existing run id returns that run).
SELECT charter.start_run(%(flow)s, %(input)s::jsonb, %(run_id)s, %(org_id)s, %(version_id)s,
                         %(priority)s);

-- name: cancel_run
-- Cancels a running run, naming who cancelled it and why.
SELECT charter.cancel_run(%(run_id)s, %(org_id)s, %(actor)s, %(reason)s);

-- name: retry_run
-- Resumes a failed run from where it stopped (completed steps are kept).
SELECT charter.retry_run(%(run_id)s, %(org_id)s, %(actor)s);

-- name: list_runs
-- Runs, newest first, optionally of one flow and status, a page after a run id.
SELECT charter.list_runs(%(flow)s, %(status)s, %(limit)s, %(after)s, %(org_id)s);

-- name: get_runs
-- Several runs by id, as get_run returns each.
SELECT charter.get_runs(%(run_ids)s::text[], %(org_id)s);

-- name: get_finished_runs
-- What a wait reads: each run as get_run gives it once finished, else its id and status.
SELECT charter.get_finished_runs(%(run_ids)s::text[], %(org_id)s);

-- name: start_runs
-- Starts many runs of one flow in one call, one input each.
SELECT charter.start_runs(%(flow)s, %(inputs)s::jsonb, %(run_ids)s::text[], %(org_id)s,
                          %(version_id)s, %(priority)s);

-- name: check_flow
-- Compares a flow's shape with the database's current version, changing nothing.
SELECT charter.check_flow(%(slug)s, %(shape)s);

-- name: list_workers
-- The workers charter knows, newest first: whether each is alive, what it serves.
SELECT charter.list_workers(%(include_stopped)s, %(dead_after_seconds)s);

-- name: queue_stats
-- The queue per flow version: ready, scheduled and running tasks, and live workers.
SELECT charter.queue_stats();

-- name: delete_flow_and_data
-- Deletes a flow and everything of it: runs, tasks, evidence, versions.
SELECT charter.delete_flow_and_data(%(slug)s);

-- name: flow_summary
-- What a flow holds (its versions, its runs by status), for confirming a deletion.
SELECT charter.flow_summary(%(slug)s);

-- name: claim_tasks
-- The payload travels as text: the worker decodes it per task, so one payload too deep for
-- Python's decoder fails its own task instead of the whole claim.
SELECT task_id, run_id, flow_slug, step_slug, task_index, attempt, delivery_token,
       idempotency_key, timeout_seconds,
       jsonb_build_object('run', run_input, 'inputs', inputs, 'item', item,
                          'resume', resume)::text AS payload, org_id
  FROM charter.claim_tasks(%(worker_id)s, %(versions)s, %(limit)s, %(lease_seconds)s);

-- name: record_outcomes
-- A worker's group of finished attempts (completions, failures) in one transaction.
SELECT task_id, outcome
  FROM charter.record_outcomes(%(task_ids)s, %(tokens)s, %(outputs)s::jsonb[], %(errors)s::jsonb[],
                               %(permanent)s, %(worker_id)s, %(costs)s::numeric[],
                               %(directives)s::jsonb[], %(org_ids)s::text[]);

-- name: record_outcomes_and_claim
-- record_outcomes, then claim_tasks for the slots the group freed, in one transaction; the
-- claimed tasks come back as claim_tasks's do.
SELECT task_id, run_id, flow_slug, step_slug, task_index, attempt, delivery_token,
       idempotency_key, timeout_seconds,
       jsonb_build_object('run', run_input, 'inputs', inputs, 'item', item,
                          'resume', resume)::text AS payload, org_id
  FROM charter.record_outcomes_and_claim(
           %(task_ids)s, %(tokens)s, %(outputs)s::jsonb[], %(errors)s::jsonb[], %(permanent)s,
           %(worker_id)s, %(costs)s::numeric[], %(directives)s::jsonb[],
           %(versions)s, %(limit)s, %(lease_seconds)s, %(org_ids)s::text[]);

-- name: extend_leases
-- A worker's heartbeat: renews the leases of the tasks it still holds.
SELECT charter.extend_leases(%(worker_id)s, %(task_ids)s, %(tokens)s, %(lease_seconds)s,
                             %(org_ids)s::text[]);

-- name: register_worker
-- Registers a starting worker; returns the flow versions it serves.
SELECT charter.register_worker(%(worker_id)s, %(hostname)s, %(pid)s, %(flows)s, %(concurrency)s,
                               %(shapes)s, %(lease_seconds)s, %(untrusted)s::text[]);

-- name: refresh_worker_versions
-- Looks again for flow versions the worker's code matches.
SELECT charter.refresh_worker_versions(%(worker_id)s, %(shapes)s, %(untrusted)s::text[]);

-- name: worker_stopped
-- Marks a worker stopped.
SELECT charter.worker_stopped(%(worker_id)s);

-- name: demo_run_outcomes
-- Runs of the site-audit demo (by id prefix) counted by status.
SELECT r.status, count(*) FROM charter.runs AS r WHERE r.id LIKE %(prefix)s GROUP BY r.status;

-- name: demo_step_stats
-- Attempts and failures per step of the site-audit demo's runs.
SELECT e.step_slug,
       count(*) FILTER (WHERE e.status = 'completed'),
       count(*) FILTER (WHERE e.status = 'failed'),
       coalesce(avg(1000 * extract(epoch FROM e.finished_at - e.started_at)), 0)::float8,
       coalesce(percentile_cont(0.5) WITHIN GROUP (
           ORDER BY 1000 * extract(epoch FROM e.finished_at - e.started_at)), 0)::float8,
       coalesce(percentile_cont(0.95) WITHIN GROUP (
           ORDER BY 1000 * extract(epoch FROM e.finished_at - e.started_at)), 0)::float8
  FROM charter.step_executions AS e
 WHERE e.run_id LIKE %(prefix)s AND e.step_slug <> '$run' AND e.started_at IS NOT NULL
 GROUP BY e.step_slug
 ORDER BY min(e.id);

-- name: ensure_workflow
-- Seed 001 § 1: creates a registry workflow (an existing one: per on_existing).
SELECT charter.ensure_workflow(%(wf_id)s::text, %(description)s::text, %(owner_id)s::text,
                               %(on_existing)s::text);

-- name: create_workflow_version
-- Seed 001 § 2: records a version of a registry workflow.
SELECT charter.create_workflow_version(
    %(workflow_id)s::text, %(dsl)s::jsonb, %(commit_message)s::text, %(operation)s::text,
    %(version_id)s::text, %(generation_id)s::text, %(parent_version_ids)s::text[],
    %(owner_id)s::text, %(auto_create_parent)s::boolean, %(on_existing)s::text,
    %(compiled)s::jsonb);

-- name: create_invocation
-- Seed 001 § 3: records an invocation (a run) of a version.
SELECT charter.create_invocation(%(invocation_id)s::text, %(version_id)s::text, %(workflow_id)s::text,
                                 %(run_id)s::text, %(generation_id)s::text, %(owner_id)s::text,
                                 %(on_existing)s::text);

-- name: update_invocation
-- Records an invocation's progress: status, end time, cost.
SELECT charter.update_invocation(%(invocation_id)s::text, %(status)s::text, %(end_time)s::timestamptz,
                                 %(usd_cost)s::numeric);

-- name: workflow_lineage
-- The ancestry tree of a registry workflow version.
SELECT charter.workflow_lineage(%(version_id)s);

-- name: eval_expr
-- Evaluates a compiled expression against variables, in SQL.
SELECT charter.eval_expr(%(compiled)s::jsonb, %(variables)s::jsonb);

-- name: version_artifacts
-- The stored artifacts of flow versions, for verification before they run.
SELECT charter.version_artifacts(%(version_ids)s::text[]);

-- name: store_recompiled
-- Stores a version's artifact compiled again (`charter recompile`).
SELECT charter.store_recompiled(%(version_id)s, %(compiled)s::jsonb);

-- name: mutate
-- The one write path of business documents: a checked create, update or transition.
SELECT charter.mutate(%(org_id)s, %(action)s, %(document_id)s, %(changes)s::jsonb, %(actor)s,
                      %(entity_type)s, %(expected_version)s, %(reason)s, %(trace_id)s, %(to)s,
                      %(via)s, %(node_id)s);

-- name: amend_document
-- Amends a document where its edit window allows it (seed 002 B4).
SELECT charter.amend_document(%(org_id)s, %(document_id)s, %(changes)s::jsonb, %(actor)s,
                              %(reason)s, %(trace_id)s);

-- name: pause_instance
-- Pauses a document's running workflow instance.
SELECT charter.pause_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: resume_instance
-- Resumes a document's paused workflow instance.
SELECT charter.resume_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: restart_instance
-- A new workflow instance for a document whose instance was cancelled or failed.
SELECT charter.restart_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: get_document
-- An org's document, or a past version of it.
SELECT charter.get_document(%(org_id)s, %(document_id)s, %(version)s);

-- name: document_history
-- A document's history: its audit trail.
SELECT charter.document_history(%(org_id)s, %(document_id)s);

-- name: list_documents
-- An org's documents, newest first, by type and state, a page after a document.
SELECT charter.list_documents(%(org_id)s, %(entity_type)s, %(state)s, %(limit)s, %(after)s);

-- name: put_user
-- Creates or replaces a user of an org's directory.
SELECT charter.put_user(%(org_id)s, %(user_id)s, %(roles)s::text[], %(manager)s, %(email)s,
                        %(phone)s);

-- name: get_user
-- A user of an org's directory.
SELECT charter.get_user(%(org_id)s, %(user_id)s);

-- name: remove_user
-- Removes a user from an org's directory.
SELECT charter.remove_user(%(org_id)s, %(user_id)s);

-- name: users_with_role
-- The users of an org holding a role.
SELECT charter.users_with_role(%(org_id)s, %(role)s);

-- name: put_org
-- Creates or replaces an org's directory entry.
SELECT charter.put_org(%(org_id)s, %(data)s::jsonb);

-- name: get_org
-- An org's directory entry.
SELECT charter.get_org(%(org_id)s);

-- name: publish_contract
-- Stores a contract with its envelope as a new version of its entity type.
SELECT charter.publish_contract(%(contract)s, %(envelope)s, %(compiled)s, %(may_publish)s);

-- name: save_org_draft
-- Saves an org's definition of an entity type as its draft.
SELECT charter.save_org_draft(%(org_id)s, %(entity_type)s, %(definition)s, %(base_ref)s);

-- name: publish_org_definition
-- Publishes an org definition compiled against the envelope version it names.
SELECT charter.publish_org_definition(%(org_id)s, %(entity_type)s, %(definition)s, %(base_ref)s,
                                      %(compiled)s);

-- name: archive_definition
-- Archives an org definition or an effective version of the org.
SELECT charter.archive_definition(%(org_id)s, %(version_id)s);

-- name: current_definition
-- The workflow an org's documents of an entity type follow now.
SELECT charter.current_definition(%(org_id)s, %(entity_type)s);

-- name: rebase_source
-- What a rebase of the org onto the newest contract of an entity type starts from.
SELECT charter.rebase_source(%(org_id)s, %(entity_type)s);

-- name: rebase_definition
-- Rebases the org onto an envelope version, with its definition recompiled on it.
SELECT charter.rebase_definition(%(org_id)s, %(entity_type)s, %(from_version_id)s, %(envelope_version)s,
                                 %(definition)s, %(compiled)s);

-- name: definition_builder
-- What the workflow builder starts from: contract, envelope, current definition and draft.
SELECT charter.definition_builder(%(org_id)s, %(entity_type)s, %(envelope_version)s::numeric);

-- name: definition_versions
-- The org's versions of its workflow for an entity type, newest first.
SELECT charter.definition_versions(%(org_id)s, %(entity_type)s);

-- name: rollback_definition
-- Publishes an earlier published org definition again.
SELECT charter.rollback_definition(%(org_id)s, %(entity_type)s, %(version_id)s, %(definition)s,
                                   %(compiled)s, %(actor)s);

-- name: engine_versions
-- The contracted workflows the documents engine may run, for it to verify first.
SELECT charter.engine_versions(%(known)s::text[]);

-- name: claim_document_events
-- Takes document events for the engine to apply, with a lease.
SELECT jsonb_agg(jsonb_build_object('created_at', e.created_at, 'id', e.id, 'org_id', e.org_id))
  FROM charter.claim_document_events(%(worker_id)s, %(limit)s, %(lease_seconds)s) AS e;

-- name: engine_sleeps
-- The idle documents engine asks to sleep until events are written (NOTIFY).
SELECT charter.engine_sleeps();

-- name: engine_wakes
-- The sleeping engine woke (or stops): writers of events stop notifying.
SELECT charter.engine_wakes();

-- name: apply_document_events
-- {"applied", "failed", "nodes"}: nodes is how many the engine finished (charter._count_nodes_run),
-- read after the call (OFFSET 0 keeps it a step of its own).
SELECT a.result || jsonb_build_object(
           'nodes', coalesce(nullif(current_setting('charter.nodes_run', true), ''), '0')::bigint)
  FROM (SELECT charter.apply_document_events(%(events)s::jsonb, %(verified)s::text[], %(refused)s::jsonb,
                                             %(worker_id)s) AS result OFFSET 0) AS a;

-- name: fire_due_waits
-- {"fired", "nodes"}: the waits resumed and the nodes the engine finished with them.
SELECT jsonb_build_object(
           'fired', f.fired,
           'nodes', coalesce(nullif(current_setting('charter.nodes_run', true), ''), '0')::bigint)
  FROM (SELECT charter.fire_due_waits(%(limit)s, %(verified)s::text[], %(refused)s::jsonb, %(worker_id)s)
               AS fired OFFSET 0) AS f;

-- name: document_workflow
-- A document's latest workflow instance: status, current nodes, waits, error.
SELECT charter.document_workflow(%(org_id)s, %(document_id)s);

-- name: document_states
-- The states of a document's contract, in order: what documents.wait may wait for.
SELECT charter.document_states(%(org_id)s, %(document_id)s);

-- name: send_event
-- Records an inbound event (once per event id) and resumes the waits on its key.
SELECT charter.send_event(%(org_id)s, %(key)s, %(payload)s::jsonb, %(event_id)s,
                          p_document_id => %(document_id)s);

-- name: put_rule
-- Adds a version of an org's rule, unless it equals the latest one.
SELECT charter.put_rule(%(org_id)s, %(rule_id)s, %(expression)s, %(ast)s::jsonb, %(description)s);

-- name: get_rule
-- An org's rule, at its newest or a given version.
SELECT charter.get_rule(%(org_id)s, %(rule_id)s, %(version)s);

-- name: advance_test_clock
-- Moves an org's test clock forward (development mode only).
SELECT set_config('charter.mode', 'development', true), charter.advance_test_clock(%(org_id)s, %(by)s::interval);

-- name: reset_test_clock
-- Returns an org's test clock to real time (development mode only).
SELECT set_config('charter.mode', 'development', true), charter.reset_test_clock(%(org_id)s);

-- name: claim_action_tasks
-- Claims the action-node tasks of the given handler types for a worker, with leases.
SELECT charter.claim_action_tasks(%(worker_id)s, %(action_types)s::text[], %(limit)s, %(lease_seconds)s);

-- name: finish_action_task
-- A handler's result: its patch is applied and the action node completes.
SELECT charter.finish_action_task(%(run_id)s, %(node_id)s, %(worker_id)s, %(patch)s::jsonb,
                                  %(error)s::jsonb, %(permanent)s, %(verified)s::text[],
                                  %(refused)s::jsonb, p_org_id => %(org_id)s);

-- name: put_schedule
-- Creates or replaces an org's cron schedule.
SELECT charter.put_schedule(%(org_id)s, %(name)s, %(cron)s, %(target)s::jsonb, %(missed)s, %(timezone)s);

-- name: list_schedules
-- An org's schedules, by name.
SELECT charter.list_schedules(%(org_id)s);

-- name: delete_schedule
-- Deletes an org's schedule.
SELECT charter.delete_schedule(%(org_id)s, %(name)s);

-- name: fire_due_schedules
-- Fires the due schedules; returns how many ticks fired.
SELECT charter.fire_due_schedules(%(limit)s);

-- name: instance_position
-- Where an instance is, for drawing: its compiled workflow and each node's status.
SELECT charter.instance_position(%(run_id)s);

-- name: contract_artifacts
-- What compiling contracted workflows again needs: each version with its artifact.
SELECT charter.contract_artifacts();

-- name: decide_approval
-- Records an approver's decision on an approval request.
SELECT charter.decide_approval(%(org_id)s, %(request_id)s, %(decision)s, %(actor)s,
                               %(entity_version)s, %(comment)s);

-- name: approval_inbox
-- The approval requests waiting for a user's decision.
SELECT charter.approval_inbox(%(org_id)s, %(user)s);

-- name: approval_inbox_shown
-- The dashboard's inbox: each request waiting for the user, with its pinned snapshot and diff.
SELECT charter.approval_inbox_shown(%(org_id)s, %(user)s);

-- name: get_approval
-- An approval request of the org (p_part: which view of it).
SELECT charter.get_approval(%(org_id)s, %(request_id)s, %(part)s);

-- name: approval_history
-- A document's approval requests and their decisions.
SELECT charter.approval_history(%(org_id)s, %(document_id)s);

-- name: define_approval_chain
-- A new version of an org's approval chain, unless its stages are the latest's.
SELECT charter.define_approval_chain(%(org_id)s, %(chain_id)s, %(stages)s::jsonb, %(allow_same_approver)s);

-- name: delegate_approvals
-- Requests made for one user while the window is open go to another.
SELECT charter.delegate_approvals(%(org_id)s, %(from_user)s, %(to_user)s, %(starts_at)s, %(ends_at)s);

-- name: claim_side_effects
-- Claims due side effects of the given types for a worker, one org at a time.
SELECT charter.claim_side_effects(%(worker_id)s, %(effect_types)s::text[], %(limit)s, %(lease_seconds)s);

-- name: claim_unsendable_side_effects
-- Claims side effects no running worker can send, to dead-letter them.
SELECT charter.claim_unsendable_side_effects(%(worker_id)s, %(effect_types)s::text[], %(limit)s,
                                             %(lease_seconds)s);

-- name: set_worker_channels
-- Records what side effects a worker can send ('webhook', 'notification:email', …).
SELECT charter.set_worker_channels(%(worker_id)s, %(channels)s::text[]);

-- name: finish_side_effect
-- An attempt's end, from the worker holding it: sent, retried later or dead-lettered.
SELECT charter.finish_side_effect(%(effect_id)s, %(worker_id)s, %(outcome)s::jsonb, %(org_id)s,
                                  %(created_at)s::timestamptz);

-- name: webhook_secret
-- An org's webhook signing secret, made on first use.
SELECT charter.webhook_secret(%(org_id)s);

-- name: run_function
-- The function runner (seed 003): a SQL function run on a payload with the caller's grants.
SELECT charter.run_function(%(name)s, %(payload)s::jsonb, %(org_id)s);

-- name: extend_side_effect_leases
-- Renews the leases of a worker's side effects; says which it has lost.
SELECT charter.extend_side_effect_leases(%(worker_id)s, %(ids)s::bigint[], %(lease_seconds)s,
                                         %(org_ids)s::text[]);

-- name: record_task_error
-- Appends an operational error for a task the worker holds (seed 003 queues.error).
SELECT charter.record_task_error(%(task_id)s, %(worker_id)s, %(stage)s, %(error)s, %(context)s::jsonb,
                                 %(org_id)s);

-- name: deliver_in_app
-- Delivers a claimed in-app notification.
SELECT charter.deliver_in_app(%(effect_id)s, %(worker_id)s, %(org_id)s);

-- name: run_maintenance
-- Deletes finished runs and evidence older than the retention period.
SELECT charter.run_maintenance(%(retention_days)s);

-- name: archive_evidence
-- Archives the evidence partitions whose month ended before a date.
SELECT charter.archive_evidence(%(before)s);

-- name: enqueue_webhook
-- A webhook the app sends through the outbox: signed, keyed, retried, dead-lettered.
SELECT charter.enqueue_webhook(%(org_id)s, %(url)s, %(body)s::jsonb, %(method)s, %(headers)s::jsonb,
                               %(idempotency_key)s, %(max_attempts)s);

-- name: get_side_effect
-- One side effect of the org.
SELECT charter.get_side_effect(%(org_id)s, %(id)s);

-- name: enqueue_task
-- Enqueues a task (db_function, email, sms or webhook); returns its id.
SELECT charter.enqueue_task(%(org_id)s, %(task_type)s, %(payload)s::jsonb,
                            coalesce(%(scheduled_at)s::timestamptz, now()));

-- name: send_email
-- Queues an email: its message, root task and kickoff, in one transaction.
SELECT charter.send_email(%(org_id)s, %(to)s, %(subject)s, %(body)s, %(max_attempts)s,
                          coalesce(%(scheduled_at)s::timestamptz, now()), %(recheck_after)s::interval);

-- name: send_email_status
-- An email's facts: where it stands and every attempt.
SELECT charter.send_email_status(%(org_id)s, %(id)s);

-- name: list_notifications
-- A user's in-app notifications, newest first.
SELECT charter.list_notifications(%(org_id)s, %(user_id)s, %(unread_only)s, %(limit)s);

-- name: mark_notifications_read
-- Marks a user's notifications read (all of them when no ids are given).
SELECT charter.mark_notifications_read(%(org_id)s, %(user_id)s, %(ids)s::bigint[]);

-- name: list_dead_letters
-- The org's dead-lettered side effects (all, or one run's).
SELECT charter.list_dead_letters(%(org_id)s, %(limit)s, %(run_id)s);

-- name: retry_side_effects
-- Re-drives dead letters: pending again with their key and fresh attempts.
SELECT charter.retry_side_effects(%(org_id)s, %(ids)s::bigint[], %(actor)s);

-- name: drop_side_effects
-- Drops dead letters of the org; returns the ids dropped.
SELECT charter.drop_side_effects(%(org_id)s, %(ids)s::bigint[], %(actor)s);

-- name: create_api_key
-- Creates an API key for an org's actor (or a platform key).
SELECT charter.create_api_key(%(org_id)s, %(actor)s, %(label)s, %(created_by)s, %(platform)s);

-- name: list_api_keys
-- An org's API keys.
SELECT charter.list_api_keys(%(org_id)s);

-- name: revoke_api_key
-- Revokes an API key.
SELECT charter.revoke_api_key(%(id)s);

-- name: authenticate_api_key
-- Who a key is (org and actor), or null for an unknown or revoked key.
SELECT charter.authenticate_api_key(%(key)s);

-- name: health_report
-- The health figures of an org, and of the workers and queues all orgs share.
SELECT charter.health_report(%(org_id)s, %(minutes)s);

-- name: stuck_instances
-- An org's instances that have not moved for the given minutes.
SELECT charter.stuck_instances(%(org_id)s, %(minutes)s);

-- name: waiting_instances
-- What an org's instances wait for that is not trouble, one row per wait.
SELECT charter.waiting_instances(%(org_id)s, %(hours)s::numeric, %(minutes)s);

-- name: nudge_instance
-- Runs a stuck instance again, with evidence of who asked.
SELECT charter.nudge_instance(%(org_id)s, %(run_id)s, %(actor)s);

-- name: force_fail_instance
-- Fails a stuck instance (STUCK_FORCE_FAILED) and cancels its pending work.
SELECT charter.force_fail_instance(%(org_id)s, %(run_id)s, %(reason)s, %(actor)s);

-- name: rebuild_instance
-- Rebuilds the projection of an org's instance from its evidence.
SELECT charter.rebuild_instance(%(org_id)s, %(run_id)s);

-- name: runs_of_org
-- Which of these runs belong to the org (another org's run is answered 404).
SELECT charter.runs_of_org(%(org_id)s, %(run_ids)s::text[]);

-- name: metrics_counts
-- The counts for /metrics: an org's runs, documents and step durations.
SELECT charter.metrics_counts(%(org_id)s);

-- name: run_graph
-- A run's compiled workflow and each node's state, for the dashboard.
SELECT charter.run_graph(%(org_id)s, %(run_id)s);

-- name: documents_shown
-- The dashboard's document list: filtered, searched by title, with the contract's columns.
SELECT charter.documents_shown(%(org_id)s, %(entity_type)s, %(state)s, %(query)s, %(limit)s);

-- name: document_shown
-- A document's page: its title, lifecycle and history as people read it.
SELECT charter.document_shown(%(org_id)s, %(document_id)s);

-- name: run_titles
-- The runs that are document instances, each named by its document's title.
SELECT charter.run_titles(%(org_id)s, %(run_ids)s);

-- name: definition_overview
-- The definitions page: each entity type with a contract, and the org's versions.
SELECT charter.definition_overview(%(org_id)s);

-- name: event_traces
-- The traces of the events a claim returned.
SELECT charter.event_traces(%(events)s::jsonb);

-- name: trace_nodes
-- Node evidence the given documents' instances wrote since a time (one engine batch).
SELECT charter.trace_nodes(%(documents)s::jsonb, %(since)s);

-- name: approvals_decided_for
-- A page of the requests a user was asked to decide that they decided or that closed.
SELECT charter.approvals_decided_for(%(org_id)s, %(user_id)s, %(limit)s, %(offset)s);
