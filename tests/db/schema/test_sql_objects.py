"""The SQL objects written once: the claimed-task row type and the step-option fallback."""

import json

CLAIMED_TASK_COLUMNS = [
    "task_id", "run_id", "flow_slug", "step_slug", "task_index", "attempt", "delivery_token",
    "idempotency_key", "run_input", "inputs", "item", "timeout_seconds", "resume", "org_id",
]  # fmt: skip


def test_every_claim_returns_the_claimed_task_type_with_the_columns_workers_read(conn):
    returns = dict(
        conn.execute(
            """SELECT p.proname, format_type(p.prorettype, NULL) || CASE WHEN p.proretset
                                                                      THEN ' set' ELSE '' END
                 FROM pg_proc AS p
                WHERE p.pronamespace = 'charter'::regnamespace
                  AND p.proname IN ('claim_tasks', '_claim_tasks_of_org',
                                    'record_outcomes_and_claim')"""
        ).fetchall()
    )
    assert returns == dict.fromkeys(
        ["claim_tasks", "_claim_tasks_of_org", "record_outcomes_and_claim"],
        "charter.claimed_task set",
    )
    columns = [
        row[0]
        for row in conn.execute(
            """SELECT a.attname FROM pg_attribute AS a
                WHERE a.attrelid = 'charter.claimed_task'::regclass AND a.attnum > 0
                ORDER BY a.attnum"""
        )
    ]
    assert columns == CLAIMED_TASK_COLUMNS


def test_step_options_fall_back_from_step_to_flow_to_default(conn):
    conn.execute("""
        INSERT INTO charter.workflows (slug, description) VALUES ('opts', 'options');
        INSERT INTO charter.workflow_versions (id, workflow_slug, version, definition_kind,
                                               dsl, commit_message, operation,
                                               opt_timeout, opt_limits)
        VALUES ('opts-v1', 'opts', 1, 'external', '{}', 'x', 'init', 30, '{"priority": 2}');
        INSERT INTO charter.flow_steps (version_id, slug, step_index, step_type,
                                        opt_max_attempts, opt_timeout)
        VALUES ('opts-v1', 'a', 0, 'single', 7, 5), ('opts-v1', 'b', 1, 'single', NULL, NULL)""")
    rows = conn.execute("""
        SELECT s.slug, o.* FROM charter.flow_steps AS s
          JOIN charter.workflow_versions AS v ON v.id = s.version_id
         CROSS JOIN LATERAL charter._step_options(
             s.opt_max_attempts, s.opt_base_delay, s.opt_timeout, s.opt_start_delay,
             s.opt_limits, v.opt_max_attempts, v.opt_base_delay, v.opt_timeout,
             v.opt_start_delay, v.opt_limits) AS o
         WHERE s.version_id = 'opts-v1' ORDER BY s.slug""").fetchall()
    # (max_attempts, base_delay, timeout, start_delay, priority): step, else flow, else default
    assert rows == [("a", 7, 1, 5, 0, 2), ("b", 3, 1, 30, 0, 2)]


def test_step_options_is_inlined_into_the_statement_that_joins_it(conn):
    plan = json.dumps(
        conn.execute("""
            EXPLAIN (FORMAT JSON, VERBOSE)
            SELECT o.max_attempts FROM charter.flow_steps AS s
              JOIN charter.workflow_versions AS v ON v.id = s.version_id
             CROSS JOIN LATERAL charter._step_options(
             s.opt_max_attempts, s.opt_base_delay, s.opt_timeout, s.opt_start_delay,
             s.opt_limits, v.opt_max_attempts, v.opt_base_delay, v.opt_timeout,
             v.opt_start_delay, v.opt_limits) AS o
             WHERE s.version_id = 'x'""").fetchone()[0]
    )
    assert "_step_options" not in plan  # no Function Scan: the coalesce is in the plan
    assert "COALESCE(s.opt_max_attempts, v.opt_max_attempts, 3)" in plan
