"""Every hot query uses the index made for it (checked with EXPLAIN on realistic data)."""

import json

from tests.engine import install, start
from tests.flows_for_tests import diamond


def _plan(conn, sql, params=()):
    return json.dumps(conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0])


def _populate(conn):
    """A few real runs, plus bulk rows shaped like 20,000 finished runs' history."""
    install(conn, diamond())
    for _ in range(50):
        start(conn, "diamond", {"n": 2})
    conn.execute("""
        INSERT INTO charter.runs (id, workflow_slug, version_id, status, input, finished_at)
        SELECT 'old-' || r, 'diamond', (SELECT current_version_id FROM charter.workflows),
               'completed', '{}', now() FROM generate_series(1, 20000) AS r""")
    conn.execute("""
        INSERT INTO charter.tasks (run_id, workflow_slug, version_id, step_slug, task_index,
                                   status, max_attempts, available_at)
        SELECT 'old-' || r, 'diamond', (SELECT current_version_id FROM charter.workflows), s, 0,
               'completed', 3, NULL
          FROM generate_series(1, 20000) AS r, unnest(ARRAY['seed', 'count', 'total']) AS s""")
    conn.execute("""
        INSERT INTO charter.inbox (run_id, target_step, source_step, value)
        SELECT 'old-' || r, s, 'seed', '[1, 2]' FROM generate_series(1, 20000) AS r,
               unnest(ARRAY['square', 'count', 'total']) AS s""")
    conn.execute("""
        INSERT INTO charter.step_receipts (run_id, idempotency_key)
        SELECT 'old-' || r, md5(r::text) FROM generate_series(1, 20000) AS r""")
    conn.execute("""
        INSERT INTO charter.step_states (run_id, step_slug, required)
        SELECT 'old-' || r, s, 0 FROM generate_series(1, 20000) AS r,
               unnest(ARRAY['seed', 'count']) AS s""")
    conn.execute("""
        INSERT INTO charter.step_executions (run_id, step_slug, status, output)
        SELECT 'old-' || r, 'seed', 'completed', '[1, 2]' FROM generate_series(1, 20000) AS r""")
    conn.execute("ANALYZE")


def test_the_claim_scan_uses_the_partial_claim_index(conn):
    _populate(conn)
    # The SELECT at the heart of one org's claim (_claim_tasks_of_org, 0350_claim_tasks.sql).
    plan = _plan(
        conn,
        """
        SELECT t.id FROM charter.tasks AS t
         WHERE t.version_id = (%s::text[])[1] AND t.org_id = 'default'
           AND t.status IN ('queued', 'started')
           AND charter._claim_order(t.available_at, t.priority, t.status) <= now()
           AND t.available_at <= now()
           AND (t.limit_key IS NULL
                OR (SELECT count(*) FROM charter.tasks AS r
                     WHERE r.limit_key = t.limit_key AND r.status = 'started'
                       AND r.available_at > now()) < t.limit_max)
         ORDER BY charter._claim_order(t.available_at, t.priority, t.status)
         LIMIT 10 FOR UPDATE SKIP LOCKED""",
        ([conn.execute("SELECT current_version_id FROM charter.workflows").fetchone()[0]],),
    )
    assert "tasks_claim_idx" in plan
    assert "Sort" not in plan  # read in claim order: the backlog is not read and sorted


def test_the_walk_to_the_next_org_reads_one_entry_of_the_claim_index(conn):
    """claim_tasks goes round the orgs with queued tasks; finding the next one must not read
    an org's backlog (an org with 20,000 queued tasks is stepped over in one probe)."""
    _populate(conn)
    conn.execute("""
        INSERT INTO charter.tasks (run_id, workflow_slug, version_id, step_slug, task_index,
                                   status, max_attempts, available_at)
        SELECT 'old-' || r, 'diamond', (SELECT current_version_id FROM charter.workflows),
               'seed', 1, 'queued', 3, now() FROM generate_series(1, 20000) AS r""")
    conn.execute("ANALYZE charter.tasks")
    version = conn.execute("SELECT current_version_id FROM charter.workflows").fetchone()[0]
    walk = "SELECT charter._next_org_with_work('tasks', %s, 'default')"
    conn.execute(walk, ([version],))  # its plan made and cached
    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + walk, ([version],))
    blocks = plan.fetchone()[0][0]["Plan"]
    assert blocks["Shared Hit Blocks"] + blocks.get("Shared Read Blocks", 0) < 10, blocks
    assert conn.execute(
        "SELECT charter._next_org_with_work('tasks', %s, ''), "
        "charter._next_org_with_work('tasks', %s, 'default')",
        ([version], [version]),
    ).fetchone() == ("default", None)


def test_per_run_lookups_use_their_primary_keys(conn):
    _populate(conn)
    run_id = conn.execute("SELECT id FROM charter.runs LIMIT 1").fetchone()[0]
    checks = {
        "step_states_pkey": "SELECT * FROM charter.step_states WHERE run_id = %s AND "
        "step_slug = 'seed'",
        "inbox_pkey": "SELECT * FROM charter.inbox WHERE run_id = %s AND target_step = 'total'",
        "step_receipts_pkey": "SELECT 1 FROM charter.step_receipts WHERE run_id = %s AND "
        "idempotency_key = 'k'",
        "tasks_run_step_index_unique": "SELECT * FROM charter.tasks WHERE run_id = %s AND "
        "status IN ('queued', 'started')",
        "runs_pkey": "SELECT * FROM charter.runs WHERE id = %s",
    }
    for index, sql in checks.items():
        assert index in _plan(conn, sql, (run_id,)), f"{index} not used by: {sql}"


def test_evidence_lookups_by_run_use_the_partitioned_index(conn):
    _populate(conn)
    plan = _plan(
        conn,
        "SELECT * FROM charter.step_executions WHERE run_id = %s AND step_slug = 'square'",
        ("x",),
    )
    assert "run_id_step_slug_task_index_idx" in plan or "step_executions_run_idx" in plan
