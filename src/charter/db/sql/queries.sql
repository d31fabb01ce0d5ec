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
SELECT charter.schema_state();

-- name: migrations_table_exists
SELECT to_regclass('charter.schema_migrations') IS NOT NULL AS present;

-- name: applied_migrations
SELECT name, kind, version, checksum FROM charter.schema_migrations ORDER BY name;

-- name: record_migration
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
SELECT charter.ensure_flow_compiled(%(slug)s, %(shape)s, %(mode)s, %(compiled)s);

-- name: deploy_flow
SELECT charter.deploy_flow(%(slug)s, %(shape)s, %(compiled)s);

-- name: ensure_partitions
SELECT charter.ensure_partitions();

-- name: start_run
SELECT charter.start_run(%(flow)s, %(input)s::jsonb, %(run_id)s, %(org_id)s, %(version_id)s,
                         %(priority)s);

-- name: get_run
SELECT charter.get_run(%(run_id)s, %(org_id)s);

-- name: cancel_run
SELECT charter.cancel_run(%(run_id)s, %(org_id)s, %(actor)s, %(reason)s);

-- name: retry_run
SELECT charter.retry_run(%(run_id)s, %(org_id)s, %(actor)s);

-- name: list_runs
SELECT charter.list_runs(%(flow)s, %(status)s, %(limit)s, %(after)s, %(org_id)s);

-- name: get_runs
SELECT charter.get_runs(%(run_ids)s::text[], %(org_id)s);

-- name: get_finished_runs
SELECT charter.get_finished_runs(%(run_ids)s::text[], %(org_id)s);

-- name: start_runs
SELECT charter.start_runs(%(flow)s, %(inputs)s::jsonb, %(run_ids)s::text[], %(org_id)s,
                          %(version_id)s, %(priority)s);

-- name: check_flow
SELECT charter.check_flow(%(slug)s, %(shape)s);

-- name: list_workers
SELECT charter.list_workers(%(include_stopped)s, %(dead_after_seconds)s);

-- name: queue_stats
SELECT charter.queue_stats();

-- name: delete_flow_and_data
SELECT charter.delete_flow_and_data(%(slug)s);

-- name: flow_summary
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
SELECT charter.extend_leases(%(worker_id)s, %(task_ids)s, %(tokens)s, %(lease_seconds)s,
                             %(org_ids)s::text[]);

-- name: register_worker
SELECT charter.register_worker(%(worker_id)s, %(hostname)s, %(pid)s, %(flows)s, %(concurrency)s,
                               %(shapes)s, %(lease_seconds)s, %(untrusted)s::text[]);

-- name: refresh_worker_versions
SELECT charter.refresh_worker_versions(%(worker_id)s, %(shapes)s, %(untrusted)s::text[]);

-- name: worker_stopped
SELECT charter.worker_stopped(%(worker_id)s);

-- name: demo_run_outcomes
SELECT r.status, count(*) FROM charter.runs AS r WHERE r.id LIKE %(prefix)s GROUP BY r.status;

-- name: demo_step_stats
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
SELECT charter.ensure_workflow(%(wf_id)s::text, %(description)s::text, %(owner_id)s::text,
                               %(on_existing)s::text);

-- name: create_workflow_version
SELECT charter.create_workflow_version(
    %(workflow_id)s::text, %(dsl)s::jsonb, %(commit_message)s::text, %(operation)s::text,
    %(version_id)s::text, %(generation_id)s::text, %(parent_version_ids)s::text[],
    %(owner_id)s::text, %(auto_create_parent)s::boolean, %(on_existing)s::text,
    %(compiled)s::jsonb);

-- name: create_invocation
SELECT charter.create_invocation(%(invocation_id)s::text, %(version_id)s::text, %(workflow_id)s::text,
                                 %(run_id)s::text, %(generation_id)s::text, %(owner_id)s::text,
                                 %(on_existing)s::text);

-- name: update_invocation
SELECT charter.update_invocation(%(invocation_id)s::text, %(status)s::text, %(end_time)s::timestamptz,
                                 %(usd_cost)s::numeric);

-- name: workflow_lineage
SELECT charter.workflow_lineage(%(version_id)s);

-- name: eval_expr
SELECT charter.eval_expr(%(compiled)s::jsonb, %(variables)s::jsonb);

-- name: version_artifacts
SELECT charter.version_artifacts(%(version_ids)s::text[]);

-- name: store_recompiled
SELECT charter.store_recompiled(%(version_id)s, %(compiled)s::jsonb);

-- name: mutate
SELECT charter.mutate(%(org_id)s, %(action)s, %(document_id)s, %(changes)s::jsonb, %(actor)s,
                      %(entity_type)s, %(expected_version)s, %(reason)s, %(trace_id)s, %(to)s,
                      %(via)s, %(node_id)s);

-- name: amend_document
SELECT charter.amend_document(%(org_id)s, %(document_id)s, %(changes)s::jsonb, %(actor)s,
                              %(reason)s, %(trace_id)s);

-- name: pause_instance
SELECT charter.pause_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: resume_instance
SELECT charter.resume_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: restart_instance
SELECT charter.restart_instance(%(org_id)s, %(document_id)s, %(actor)s, %(reason)s);

-- name: get_document
SELECT charter.get_document(%(org_id)s, %(document_id)s, %(version)s);

-- name: document_history
SELECT charter.document_history(%(org_id)s, %(document_id)s);

-- name: list_documents
SELECT charter.list_documents(%(org_id)s, %(entity_type)s, %(state)s, %(limit)s, %(after)s);

-- name: put_user
SELECT charter.put_user(%(org_id)s, %(user_id)s, %(roles)s::text[], %(manager)s, %(email)s,
                        %(phone)s);

-- name: get_user
SELECT charter.get_user(%(org_id)s, %(user_id)s);

-- name: remove_user
SELECT charter.remove_user(%(org_id)s, %(user_id)s);

-- name: users_with_role
SELECT charter.users_with_role(%(org_id)s, %(role)s);

-- name: put_org
SELECT charter.put_org(%(org_id)s, %(data)s::jsonb);

-- name: get_org
SELECT charter.get_org(%(org_id)s);

-- name: publish_contract
SELECT charter.publish_contract(%(contract)s, %(envelope)s, %(compiled)s, %(may_publish)s);

-- name: save_org_draft
SELECT charter.save_org_draft(%(org_id)s, %(entity_type)s, %(definition)s, %(base_ref)s);

-- name: publish_org_definition
SELECT charter.publish_org_definition(%(org_id)s, %(entity_type)s, %(definition)s, %(base_ref)s,
                                      %(compiled)s);

-- name: archive_definition
SELECT charter.archive_definition(%(org_id)s, %(version_id)s);

-- name: current_definition
SELECT charter.current_definition(%(org_id)s, %(entity_type)s);

-- name: rebase_source
SELECT charter.rebase_source(%(org_id)s, %(entity_type)s);

-- name: rebase_definition
SELECT charter.rebase_definition(%(org_id)s, %(entity_type)s, %(from_version_id)s, %(envelope_version)s,
                                 %(definition)s, %(compiled)s);

-- name: engine_versions
SELECT charter.engine_versions(%(known)s::text[]);

-- name: claim_document_events
SELECT jsonb_agg(jsonb_build_object('created_at', e.created_at, 'id', e.id, 'org_id', e.org_id))
  FROM charter.claim_document_events(%(worker_id)s, %(limit)s, %(lease_seconds)s) AS e;

-- name: engine_sleeps
SELECT charter.engine_sleeps();

-- name: engine_wakes
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
SELECT charter.document_workflow(%(org_id)s, %(document_id)s);

-- name: document_states
SELECT charter.document_states(%(org_id)s, %(document_id)s);

-- name: instance_steps
SELECT charter.instance_steps(%(run_id)s);

-- name: compute_instance_projection
SELECT charter.compute_instance_projection(%(run_id)s);

-- name: rebuild_instance_projection
SELECT charter.rebuild_instance_projection(%(run_id)s);

-- name: send_event
SELECT charter.send_event(%(org_id)s, %(key)s, %(payload)s::jsonb, %(event_id)s,
                          p_document_id => %(document_id)s);

-- name: confirm_side_effect
SELECT charter.confirm_side_effect(%(effect_id)s, %(response)s::jsonb);

-- name: put_rule
SELECT charter.put_rule(%(org_id)s, %(rule_id)s, %(expression)s, %(ast)s::jsonb, %(description)s);

-- name: get_rule
SELECT charter.get_rule(%(org_id)s, %(rule_id)s, %(version)s);

-- name: advance_test_clock
SELECT set_config('charter.mode', 'development', true), charter.advance_test_clock(%(org_id)s, %(by)s::interval);

-- name: reset_test_clock
SELECT set_config('charter.mode', 'development', true), charter.reset_test_clock(%(org_id)s);

-- name: claim_action_tasks
SELECT charter.claim_action_tasks(%(worker_id)s, %(action_types)s::text[], %(limit)s, %(lease_seconds)s);

-- name: finish_action_task
SELECT charter.finish_action_task(%(run_id)s, %(node_id)s, %(worker_id)s, %(patch)s::jsonb,
                                  %(error)s::jsonb, %(permanent)s, %(verified)s::text[],
                                  %(refused)s::jsonb, p_org_id => %(org_id)s);

-- name: put_schedule
SELECT charter.put_schedule(%(org_id)s, %(name)s, %(cron)s, %(target)s::jsonb, %(missed)s, %(timezone)s);

-- name: list_schedules
SELECT charter.list_schedules(%(org_id)s);

-- name: delete_schedule
SELECT charter.delete_schedule(%(org_id)s, %(name)s);

-- name: fire_due_schedules
SELECT charter.fire_due_schedules(%(limit)s);

-- name: instance_position
SELECT charter.instance_position(%(run_id)s);

-- name: contract_artifacts
SELECT charter.contract_artifacts();

-- name: decide_approval
SELECT charter.decide_approval(%(org_id)s, %(request_id)s, %(decision)s, %(actor)s,
                               %(entity_version)s, %(comment)s);

-- name: approval_inbox
SELECT charter.approval_inbox(%(org_id)s, %(user)s);

-- name: get_approval
SELECT charter.get_approval(%(org_id)s, %(request_id)s, %(part)s);

-- name: approval_history
SELECT charter.approval_history(%(org_id)s, %(document_id)s);

-- name: define_approval_chain
SELECT charter.define_approval_chain(%(org_id)s, %(chain_id)s, %(stages)s::jsonb, %(allow_same_approver)s);

-- name: delegate_approvals
SELECT charter.delegate_approvals(%(org_id)s, %(from_user)s, %(to_user)s, %(starts_at)s, %(ends_at)s);

-- name: claim_side_effects
SELECT charter.claim_side_effects(%(worker_id)s, %(effect_types)s::text[], %(limit)s, %(lease_seconds)s);

-- name: claim_unsendable_side_effects
SELECT charter.claim_unsendable_side_effects(%(worker_id)s, %(effect_types)s::text[], %(limit)s,
                                             %(lease_seconds)s);

-- name: set_worker_channels
SELECT charter.set_worker_channels(%(worker_id)s, %(channels)s::text[]);

-- name: finish_side_effect
SELECT charter.finish_side_effect(%(effect_id)s, %(worker_id)s, %(outcome)s::jsonb, %(org_id)s,
                                  %(created_at)s::timestamptz);

-- name: webhook_secret
SELECT charter.webhook_secret(%(org_id)s);

-- name: run_function
SELECT charter.run_function(%(name)s, %(payload)s::jsonb, %(org_id)s);

-- name: extend_side_effect_leases
SELECT charter.extend_side_effect_leases(%(worker_id)s, %(ids)s::bigint[], %(lease_seconds)s,
                                         %(org_ids)s::text[]);

-- name: record_task_error
SELECT charter.record_task_error(%(task_id)s, %(worker_id)s, %(stage)s, %(error)s, %(context)s::jsonb,
                                 %(org_id)s);

-- name: deliver_in_app
SELECT charter.deliver_in_app(%(effect_id)s, %(worker_id)s, %(org_id)s);

-- name: run_maintenance
SELECT charter.run_maintenance(%(retention_days)s);

-- name: archive_evidence
SELECT charter.archive_evidence(%(before)s);

-- name: enqueue_webhook
SELECT charter.enqueue_webhook(%(org_id)s, %(url)s, %(body)s::jsonb, %(method)s, %(headers)s::jsonb,
                               %(idempotency_key)s, %(max_attempts)s);

-- name: get_side_effect
SELECT charter.get_side_effect(%(org_id)s, %(id)s);

-- name: enqueue_task
SELECT charter.enqueue_task(%(org_id)s, %(task_type)s, %(payload)s::jsonb,
                            coalesce(%(scheduled_at)s::timestamptz, now()));

-- name: send_email
SELECT charter.send_email(%(org_id)s, %(to)s, %(subject)s, %(body)s, %(max_attempts)s,
                          coalesce(%(scheduled_at)s::timestamptz, now()), %(recheck_after)s::interval);

-- name: send_email_status
SELECT charter.send_email_status(%(org_id)s, %(id)s);

-- name: list_notifications
SELECT charter.list_notifications(%(org_id)s, %(user_id)s, %(unread_only)s, %(limit)s);

-- name: mark_notifications_read
SELECT charter.mark_notifications_read(%(org_id)s, %(user_id)s, %(ids)s::bigint[]);

-- name: list_dead_letters
SELECT charter.list_dead_letters(%(org_id)s, %(limit)s, %(run_id)s);

-- name: retry_side_effects
SELECT charter.retry_side_effects(%(org_id)s, %(ids)s::bigint[], %(actor)s);

-- name: drop_side_effects
SELECT charter.drop_side_effects(%(org_id)s, %(ids)s::bigint[], %(actor)s);

-- name: create_api_key
SELECT charter.create_api_key(%(org_id)s, %(actor)s, %(label)s, %(created_by)s, %(platform)s);

-- name: list_api_keys
SELECT charter.list_api_keys(%(org_id)s);

-- name: revoke_api_key
SELECT charter.revoke_api_key(%(id)s);

-- name: authenticate_api_key
SELECT charter.authenticate_api_key(%(key)s);

-- name: health_report
SELECT charter.health_report(%(org_id)s, %(minutes)s);

-- name: stuck_instances
SELECT charter.stuck_instances(%(org_id)s, %(minutes)s);

-- name: waiting_instances
SELECT charter.waiting_instances(%(org_id)s, %(hours)s::numeric, %(minutes)s);

-- name: nudge_instance
SELECT charter.nudge_instance(%(org_id)s, %(run_id)s, %(actor)s);

-- name: force_fail_instance
SELECT charter.force_fail_instance(%(org_id)s, %(run_id)s, %(reason)s, %(actor)s);

-- name: rebuild_instance
SELECT charter.rebuild_instance(%(org_id)s, %(run_id)s);

-- name: runs_of_org
SELECT charter.runs_of_org(%(org_id)s, %(run_ids)s::text[]);

-- name: metrics_counts
SELECT charter.metrics_counts(%(org_id)s);

-- name: run_graph
SELECT charter.run_graph(%(org_id)s, %(run_id)s);

-- name: definition_overview
SELECT charter.definition_overview(%(org_id)s);

-- name: event_traces
SELECT charter.event_traces(%(events)s::jsonb);

-- name: trace_nodes
SELECT charter.trace_nodes(%(documents)s::jsonb, %(since)s);

-- name: approvals_closed_for
SELECT charter.approvals_closed_for(%(org_id)s, %(user_id)s);
