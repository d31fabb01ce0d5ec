"""What the citus suite does not yet pass on a Citus cluster, each with why: on a cluster
these tests are expected to fail (strictly, so a fix shows up as an unexpected pass, and
the entry goes). Keyed by (module, test) under tests/db/runs; docs/architecture.md §15
lists the same gaps for users."""

CITUS_GAPS: dict[tuple[str, str], str] = {
    (
        "test_chain_runs",
        "test_a_finished_chain_reads_the_same_once_retention_dropped_its_evidence",
    ): (
        "retention's permission to delete evidence is a transaction setting, which does not "
        "reach the worker nodes' triggers"
    ),
    ("test_run_control", "test_delete_flow_and_data_removes_runs_and_all_their_rows"): (
        "the same transaction setting as retention: the shards' triggers refuse the delete"
    ),
    ("test_chain_runs", "test_a_chain_whose_first_step_is_limited_queues_it_with_its_limit"): (
        "the test tunes a published version's step in place, which the reference table's "
        "trigger refuses on the worker nodes (WF-04)"
    ),
    (
        "test_claim_order",
        "test_a_rate_key_shared_by_two_flows_is_one_bucket_at_the_strictest_rate",
    ): (
        "a rate-limited task's next time is now() plus an interval of a column, a STABLE "
        "operator that Citus will not evaluate in an UPDATE"
    ),
    ("test_run_control", "test_retry_resumes_a_failed_run_without_rerunning_completed_work"): (
        "the retry writes on two nodes and notifies: Citus cannot PREPARE a transaction "
        "that ran NOTIFY"
    ),
    ("test_start_runs", "test_a_taken_id_returns_the_same_run_or_says_why_not"): (
        "start_runs' set-based INSERT ... SELECT ... ON CONFLICT DO NOTHING is routed "
        "through the coordinator, where the conflict is not seen"
    ),
    ("test_start_runs", "test_the_same_id_twice_in_one_batch_is_one_run_or_a_conflict"): (
        "as above: start_runs' ON CONFLICT through the coordinator"
    ),
    (
        "test_record_outcomes",
        "test_a_group_records_exactly_what_its_tasks_recorded_one_at_a_time_would",
    ): (
        "a group of completions of several orgs writes on two nodes and notifies: Citus "
        "cannot PREPARE a transaction that ran NOTIFY (a worker must send a group per org)"
    ),
}
