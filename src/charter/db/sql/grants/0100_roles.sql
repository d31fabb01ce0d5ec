-- Who may do what in schema charter; applied after every change of the functions, so a
-- function added later never keeps PostgreSQL's default EXECUTE for PUBLIC.
-- Everything structural or destructive (migrating, deploying, deleting flows) stays with
-- the schema's owner: the roles below get no table privilege and only these functions.

REVOKE ALL ON SCHEMA charter FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA charter FROM PUBLIC, charter_worker, charter_app;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA charter FROM PUBLIC, charter_worker, charter_app;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA charter FROM PUBLIC, charter_worker, charter_app;
-- Archived evidence (archive_evidence) is read through its parents in schema charter only.
REVOKE ALL ON SCHEMA charter_archive FROM PUBLIC, charter_worker, charter_app;
REVOKE ALL ON ALL TABLES IN SCHEMA charter_archive FROM PUBLIC, charter_worker, charter_app;

GRANT USAGE ON SCHEMA charter TO charter_worker, charter_app;

-- The worker: register, claim, complete, fail, heartbeat, stop; the monthly partitions of
-- the evidence table ahead of time; and checking schema and flows before it starts.
GRANT EXECUTE ON FUNCTION
    charter.register_worker, charter.refresh_worker_versions, charter.claim_tasks,
    charter.complete_task, charter.complete_tasks, charter.fail_task, charter.fail_tasks,
    charter.record_outcomes, charter.record_outcomes_and_claim,
    charter.extend_leases, charter.worker_stopped, charter.ensure_partitions,
    charter.check_flow, charter.schema_state, charter.version_artifacts,
    charter.mutate, charter.amend_document, charter.get_document, charter.current_definition,
    charter.claim_document_events, charter.apply_document_events, charter.fire_due_waits,
    charter.confirm_side_effect, charter.document_workflow, charter.engine_versions,
    charter.claim_action_tasks, charter.finish_action_task, charter.fire_due_schedules,
    charter.claim_side_effects, charter.finish_side_effect, charter.extend_side_effect_leases,
    charter.deliver_in_app, charter.run_maintenance, charter.event_traces, charter.trace_nodes,
    charter.engine_sleeps, charter.engine_wakes
TO charter_worker;

-- What the worker can send, and the notifications no running worker can (issue #38).
GRANT EXECUTE ON FUNCTION charter.set_worker_channels, charter.claim_unsendable_side_effects
TO charter_worker;

-- The states documents.wait(until=STATE) may wait for.
GRANT EXECUTE ON FUNCTION charter.document_states TO charter_worker, charter_app;

-- Seed 003's queue: dequeue and complete (finish_side_effect), the runner, error records,
-- and each supervisor and handler the worker must call — nothing that enqueues.
GRANT EXECUTE ON FUNCTION
    charter.dequeue_next_available_task, charter.run_function, charter.record_task_error,
    charter.send_email_supervisor, charter.get_email_payload, charter.record_email_success,
    charter.record_email_failure
TO charter_worker;

-- The app: the client (start, inspect, wait, cancel, retry, operate) and the registry.
GRANT EXECUTE ON FUNCTION
    charter.start_run, charter.start_runs, charter.get_run, charter.get_runs,
    charter.get_finished_runs, charter.list_runs, charter.cancel_run, charter.retry_run,
    charter.check_flow, charter.list_workers, charter.queue_stats, charter.eval_expr,
    charter.schema_state, charter.ensure_workflow, charter.create_workflow_version,
    charter.create_invocation, charter.update_invocation, charter.workflow_lineage
TO charter_app;

-- Documents (seed 002): the app writes only through mutate() and its siblings, and reads
-- the documents tables directly only under row-level security (its org's rows).
GRANT EXECUTE ON FUNCTION
    charter.mutate, charter.amend_document, charter.get_document, charter.document_history,
    charter.list_documents, charter.put_user, charter.get_user, charter.remove_user,
    charter.users_with_role, charter.put_org, charter.get_org, charter.save_org_draft,
    charter.publish_org_definition, charter.archive_definition, charter.current_definition,
    charter.publish_contract, charter.rebase_source, charter.rebase_definition,
    charter.definition_builder, charter.definition_versions, charter.rollback_definition,
    charter.document_workflow, charter.instance_steps,
    charter.compute_instance_projection, charter.send_event, charter.put_rule, charter.get_rule,
    charter.put_schedule, charter.list_schedules, charter.delete_schedule, charter.instance_position,
    charter.retry_dead_letters, charter.decide_approval, charter.approval_inbox, charter.get_approval,
    charter.approval_history, charter.define_approval_chain, charter.delegate_approvals,
    charter.webhook_secret, charter.pause_instance, charter.resume_instance,
    charter.restart_instance
TO charter_app;

-- Side effects: the app's webhooks, tasks and emails (kickoffs), in-app notifications and
-- the dead letter queue.
GRANT EXECUTE ON FUNCTION
    charter.enqueue_webhook, charter.get_side_effect, charter.enqueue_task, charter.send_email,
    charter.send_email_status, charter.list_notifications,
    charter.mark_notifications_read, charter.list_dead_letters, charter.retry_side_effects,
    charter.drop_side_effects
TO charter_app;

-- The ops surface (`charter serve` runs as the app): who a key is, the health figures, the
-- stuck detector and its ways out. Making and revoking keys stays with the owner.
GRANT EXECUTE ON FUNCTION
    charter.authenticate_api_key, charter.health_report, charter.stuck_instances,
    charter.waiting_instances,
    charter.nudge_instance, charter.force_fail_instance, charter.rebuild_instance,
    charter.runs_of_org, charter.metrics_counts, charter.run_graph, charter.definition_overview,
    charter.approvals_decided_for, charter.approval_inbox_shown
TO charter_app;
-- The dashboard's readable pages: documents by title, a document's lifecycle and history,
-- runs named by their document.
GRANT EXECUTE ON FUNCTION
    charter.documents_shown, charter.document_shown, charter.run_titles
TO charter_app;
GRANT SELECT ON
    charter.documents, charter.document_versions, charter.document_audit,
    charter.directory_users, charter.directory_orgs, charter.workflow_instances
TO charter_app;
