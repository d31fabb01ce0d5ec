"""A worker's session keeps the plans of its claim and completion statements (made once, on
its first call). A worker usually starts on an empty queue, so those plans are made while
the tables are tiny: they must still read by key once the tables have grown, not scan them.
The plans actually used are read with auto_explain, statement by statement."""

import re
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from charter import Flow
from tests.engine import claim, install

RUNTIME_TABLES = ("tasks", "runs", "step_states", "inbox", "step_receipts", "step_executions")


def chain() -> Flow:
    flow = Flow("plans_chain")
    first = flow.step(slug="first")(lambda run: 1)
    second = flow.step(slug="second", depends_on=[first])(lambda first: first + 1)
    flow.step(slug="third", depends_on=[second])(lambda second: second + 1)
    return flow


def _log_plans(conn: psycopg.Connection[Any]) -> list[str]:
    """Every statement's plan from now on (nested ones too), as LOG notices."""
    plans: list[str] = []
    conn.add_notice_handler(lambda notice: plans.append(notice.message_primary or ""))
    conn.execute("LOAD 'auto_explain'")
    conn.execute("SET auto_explain.log_min_duration = 0")
    conn.execute("SET auto_explain.log_nested_statements = on")
    conn.execute("SET client_min_messages = log")
    return plans


def _record(conn: psycopg.Connection[Any], tasks: list[Any]) -> None:
    """Records completions as the worker does: each task named by its id and its org."""
    outcomes = conn.execute(
        "SELECT outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[], %s::jsonb[], %s, %s, "
        "%s::numeric[], NULL, %s::text[])",
        (
            [t.id for t in tasks],
            [t.token for t in tasks],
            [Jsonb(1)] * len(tasks),
            [None] * len(tasks),
            [False] * len(tasks),
            "test-worker",
            [0] * len(tasks),
            [t.org for t in tasks],
        ),
    ).fetchall()
    assert [o for (o,) in outcomes] == ["completed"] * len(tasks)


def test_plans_made_on_an_empty_queue_still_read_by_key_when_it_has_grown(conn):
    flow = chain()
    install(conn, flow)
    plans = _log_plans(conn)
    # First calls on empty tables: the session makes its plans now.
    conn.execute("SELECT charter.start_runs(%s, %s)", (flow.slug, Jsonb([{}])))
    _record(conn, claim(conn, [flow.slug], limit=5))
    _record(conn, claim(conn, [flow.slug], limit=5))

    conn.execute(
        "SELECT charter.start_runs(%s, %s)", (flow.slug, Jsonb([{"n": n} for n in range(4000)]))
    )
    plans.clear()
    for _ in range(3):
        _record(conn, claim(conn, [flow.slug], limit=20))

    assert any("Update on tasks" in plan for plan in plans)  # the claim was seen
    scans = [
        table
        for plan in plans
        for table in re.findall(r"Seq Scan on (\w+)", plan)
        if table in RUNTIME_TABLES
    ]
    assert scans == [], f"the claim or the completion scanned {sorted(set(scans))}"
    # A completion deletes its task by its whole key, not by walking one org's claim index.
    deletes = [plan for plan in plans if "Delete on tasks" in plan]
    assert deletes and all("Index Scan using tasks_pkey" in plan for plan in deletes), deletes


def test_a_completion_planned_beside_a_backlog_deletes_its_task_by_the_whole_key(conn):
    # A worker claims first on an empty queue and records its first group once a backlog
    # is queued: the completion's plan is made then, before the table has statistics. A
    # task named by its id alone under the key (id, org_id) was no longer sure to be one
    # row, and that plan walked the whole claim index beside the key (its status matches
    # the index's). Named by (id, org_id), it reads one row.
    flow = chain()
    install(conn, flow)
    plans = _log_plans(conn)
    claim(conn, [flow.slug], limit=5)
    conn.execute(
        "SELECT charter.start_runs(%s, %s)", (flow.slug, Jsonb([{"n": n} for n in range(10000)]))
    )
    plans.clear()
    for _ in range(3):
        _record(conn, claim(conn, [flow.slug], limit=100))
    deletes = [plan for plan in plans if "Delete on tasks" in plan]
    assert deletes, "no completion was seen"
    assert all("tasks_claim_idx" not in plan for plan in deletes), deletes[0]
    assert all("Index Scan using tasks_pkey" in plan for plan in deletes), deletes[0]


def _partitions_read(plans: list[str], table: str) -> set[str]:
    """The partitions of ``table`` the logged plans scan (an UPDATE names every partition as
    a target; run-time pruning leaves out the scans of those it need not read)."""
    scanned = rf"Scan(?: using \S+)? on ({table}_(?:\d{{4}}_\d{{2}}|default))\b"
    return {name for plan in plans for name in re.findall(scanned, plan)}


def test_a_side_effects_answer_named_by_its_whole_key_reads_one_partition(conn):
    """claim_side_effects hands back each row's org and created_at; the answer that names
    them reads the row in its own monthly partition (a generic plan, pruned at run time),
    where an answer by id alone probes every partition."""
    for n in range(2):
        conn.execute(
            "SELECT charter.enqueue_webhook('acme', 'http://127.0.0.1:9/hook', %s)", (Jsonb(n),)
        )
    claimed = [
        row
        for (row,) in conn.execute(
            "SELECT c FROM charter.claim_side_effects('w1', ARRAY['webhook'], 2, 30) AS c"
        ).fetchall()
    ]
    assert len(claimed) == 2
    first, second = claimed
    plans = _log_plans(conn)
    outcome = conn.execute(
        "SELECT charter.finish_side_effect(%s, 'w1', %s, %s, %s::timestamptz)",
        (first["id"], Jsonb({"ok": True, "response": {}}), first["orgId"], first["createdAt"]),
    ).fetchone()
    assert outcome == ("delivered",)
    by_key = _partitions_read(plans, "side_effects")
    plans.clear()
    outcome = conn.execute(
        "SELECT charter.finish_side_effect(%s, 'w1', %s)",
        (second["id"], Jsonb({"ok": True, "response": {}})),
    ).fetchone()
    assert outcome == ("delivered",)
    by_id = _partitions_read(plans, "side_effects")
    assert len(by_key) == 1, by_key
    assert len(by_id) > 1, by_id  # the current month's, the months ahead and the default


def test_the_events_claim_finds_each_documents_oldest_event_by_key(conn):
    """claim_document_events takes only each document's oldest unfinished event. Asked as a
    NOT EXISTS, the planner, knowing the org, read all of the org's unfinished events once
    and compared every candidate with each of them (21 ms a claim with 140,000 waiting);
    looked up per candidate, it is one probe of (org, document) per partition. The session's
    plan is made by a first claim on an empty outbox, as a worker's is."""
    claim_sql = "SELECT id, org_id FROM charter.claim_document_events('test-worker', 20, 30)"
    conn.execute("INSERT INTO charter.document_events (org_id, document_id, entity_type, "
                 "entity_version, event_type, idempotency_key, trace_id) "
                 "VALUES ('acme', 'doc-0', 'invoice', 0, 'on_mutation', 'k-0', 't')")  # fmt: skip
    assert len(conn.execute(claim_sql).fetchall()) == 1  # the org's claim plans while tiny
    conn.execute("""
        INSERT INTO charter.document_events (org_id, document_id, entity_type, entity_version,
                                             event_type, idempotency_key, trace_id)
        SELECT 'acme', 'doc-' || (n % 2500), 'invoice', n, 'on_mutation', 'k-' || n, 't'
          FROM generate_series(1, 5000) AS n""")
    plans = _log_plans(conn)
    claimed = conn.execute(claim_sql).fetchall()
    assert len(claimed) == 20 and {org for _, org in claimed} == {"acme"}
    firsts = conn.execute(
        "SELECT min(id) FROM charter.document_events WHERE document_id <> 'doc-0' "
        "GROUP BY document_id"
    ).fetchall()
    assert {event for event, _ in claimed} <= {event for (event,) in firsts}
    claims = [plan for plan in plans if "LockRows" in plan and "document_events" in plan]
    assert claims, plans
    assert all("Materialize" not in plan for plan in claims), claims[0]
    assert all(re.search(r"document_id = \w+\.document_id", plan) for plan in claims), claims[0]
    assert all("Seq Scan" not in plan for plan in claims), claims[0]
    # The candidates come in the poll index's order; a plan that sorts them read them all.
    assert all("next_retry_at_created_at_idx" in plan for plan in claims), claims[0]
    assert all(not re.search(r"->\s+Sort\s", plan) for plan in claims), claims[0]


def test_applying_claimed_events_reads_each_by_its_whole_key(conn):
    """apply_document_events locks each claimed event by its key. Its plan is made on a
    small outbox, as a worker's is; asked with the event's status too, that plan used the poll
    index, (org, next_retry_at, created_at), and read every open event of the org to find
    each one, so a backlog drained in quadratic time."""

    def event(n: int) -> str:
        return (
            "INSERT INTO charter.document_events (org_id, document_id, entity_type, entity_version,"
            f" event_type, idempotency_key, trace_id) SELECT 'acme', 'doc-' || n, 'invoice', n,"
            f" 'on_mutation', 'k-' || n, 't' FROM generate_series({n}, {n + 4999 if n else 0}) AS n"
        )

    def claim_and_apply(limit: int) -> int:
        claimed = conn.execute(
            "SELECT jsonb_agg(jsonb_build_object('created_at', e.created_at, 'id', e.id,"
            " 'org_id', e.org_id)) FROM charter.claim_document_events('test-worker', %s, 30) AS e",
            (limit,),
        ).fetchone()[0]
        result = conn.execute(
            "SELECT charter.apply_document_events(%s, '{}', '{}', 'test-worker')",
            (Jsonb(claimed),),
        ).fetchone()[0]
        return int(result["applied"]) + int(result["failed"])

    conn.execute(event(0))
    assert claim_and_apply(1) == 1  # the session's plans are made on a tiny outbox
    conn.execute(event(1))
    plans = _log_plans(conn)
    assert claim_and_apply(20) == 20
    reads = [
        p for p in plans if "LockRows" in p and "document_events" in p and "e.org_id = v_org" in p
    ]
    assert reads, plans
    assert all("_pkey" in plan for plan in reads), reads[0]
    assert all("next_retry_at_created_at_idx" not in plan for plan in reads), reads[0]
