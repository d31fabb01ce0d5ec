"""WF-15: an instance's projection is rebuilt whole from its evidence. At five points of a
real instance's life (parallel tokens, a pending join, an approval outstanding, paused,
finished), each projected column is damaged in turn, for the instance and for every one of
its readiness rows; health.rebuild then puts back exactly the live projection. The same
holds across the use cases and after every step of random sequences (hypothesis)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import runtime_definitions as defs

INSTANCE = (
    "SELECT status, current_nodes, context, epoch, completed_at, error, cancel_reason "
    "FROM charter.workflow_instances WHERE org_id = 'acme' AND id = %s"
)
READINESS = (
    "SELECT step_slug, status, arrivals, skipped_arrivals, token, outcome FROM charter.step_states "
    "WHERE org_id = 'acme' AND run_id = %s ORDER BY step_slug"
)
WHERE_INSTANCE = " WHERE org_id = 'acme' AND id = %s"
WHERE_ROWS = " WHERE org_id = 'acme' AND run_id = %s"
# Each projected column, damaged: (table, SET clause).
DAMAGE = [
    ("workflow_instances", "status = CASE WHEN status IN ('running', 'paused') THEN 'failed' "
                           "ELSE 'running' END, completed_at = CASE WHEN status IN ('running', "
                           "'paused') THEN now() END"),
    ("workflow_instances", "current_nodes = '{sys:end,nowhere}'"),
    ("workflow_instances", "context = '{\"forged\": true}'"),
    ("workflow_instances", "epoch = epoch + 41"),
    ("step_states", "status = CASE status WHEN 'waiting' THEN 'completed' ELSE 'waiting' END"),
    ("step_states", "arrivals = CASE WHEN arrivals = 0 THEN required ELSE 0 END, "
                    "skipped_arrivals = 0"),
    ("step_states", "skipped_arrivals = arrivals"),
    ("step_states", "token = coalesce(token || '/forged', 't9')"),
    ("step_states", "outcome = coalesce(outcome || '-forged', 'reject')"),
]  # fmt: skip


@pytest.fixture
def split(acme):
    """open → a parallel split: one path waits for event a then assigns the context, the
    other waits for event b; an ALL join, then an approval, then the document closes."""
    contract = defs.contract("job", {"n": "number"})
    org = defs.org_definition(
        "job",
        [("fork", "parallel_split", {}),
         ("wait_a", "wait_event", {"eventKey": "a:{entity.n}"}),
         ("note", "script", {"expression": "entity.n > 5", "assignTo": "context.big"}),
         ("wait_b", "wait_event", {"eventKey": "b:{entity.n}"}),
         ("both", "parallel_join", {"mode": "all"}),
         ("sign", "approval", {"mode": "inline", "approvers": [{"role": "franchise_ops"}]})],
        [("fork", "wait_a", {}), ("wait_a", "note", {}), ("note", "both", {}),
         ("fork", "wait_b", {}), ("wait_b", "both", {}), ("both", "sign", {})],
    )  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    return acme


def snapshot(sql, run: str) -> tuple[Any, ...]:
    return sql(INSTANCE, run)[0], sql(READINESS, run)


def damage(db_url, run: str, table: str, change: str) -> None:
    """Writes a wrong projection past the status trigger, as a bug or a hand would."""
    where = WHERE_INSTANCE if table == "workflow_instances" else WHERE_ROWS
    with psycopg.connect(db_url) as conn:
        conn.execute("SELECT set_config('charter.admin_override', 'on', true)")
        conn.execute(f"UPDATE charter.{table} SET {change}{where}", (run,))


def check_rebuild(db_url, sql, client, run: str, point: str) -> tuple[Any, ...]:
    live = snapshot(sql, run)
    for table, change in DAMAGE:
        damage(db_url, run, table, change)
        assert snapshot(sql, run) != live, f"{point}: {table}: {change} changed nothing"
        assert client.health.rebuild(run) is True
        assert snapshot(sql, run) == live, f"{point}: after damaging {table}: {change}"
    return live


def test_the_rebuild_restores_every_projected_column_at_five_points(split, engine, db_url, sql):
    acme, docs = split, split.documents
    doc = docs.create("job", {"n": 7}, actor="sales")
    docs.transition(doc.id, "open", actor="sales")
    run = docs.wait(doc.id, timeout=20, until="idle").workflow.run_id

    # 1. Two parallel tokens, each at its own wait.
    (instance, rows) = check_rebuild(db_url, sql, acme, run, "parallel tokens")
    waiting = {r[0].rsplit(":", 1)[-1]: r for r in rows if r[1] == "running"}
    assert {"wait_a", "wait_b"} <= set(waiting)
    assert waiting["wait_a"][4] != waiting["wait_b"][4]  # each path has its own token

    # 2. One path has arrived at the ALL join, which waits for the other.
    acme.events.send("a:7", {"by": "courier"})
    docs.wait(doc.id, timeout=20, until="idle")
    (instance, rows) = check_rebuild(db_url, sql, acme, run, "pending join")
    [join] = [r for r in rows if r[0].endswith(":both")]
    assert join[1:4] == ("waiting", 1, 0)
    assert instance[2] == {"big": True, "event": {"by": "courier"}}

    # 3. The join has passed; the approval is outstanding.
    acme.events.send("b:7", {"by": "post"})
    docs.wait(doc.id, timeout=20, until="idle")
    (instance, rows) = check_rebuild(db_url, sql, acme, run, "approval outstanding")
    assert any(r[0].endswith(":sign") and r[1] == "running" for r in rows)

    # 4. Paused by an operator.
    docs.pause(doc.id, actor="boss", reason="audit")
    (instance, rows) = check_rebuild(db_url, sql, acme, run, "paused")
    assert instance[0] == "paused"
    docs.resume(doc.id, actor="boss")

    # 5. Approved: the document closes and the instance completes.
    [request] = acme.approvals.inbox("boss")
    acme.approvals.decide(
        request.id, "approved", actor="boss", entity_version=request.entity_version
    )
    assert docs.wait(doc.id, timeout=20, until="idle").state == "done"
    (instance, rows) = check_rebuild(db_url, sql, acme, run, "completed")
    assert instance[0] == "completed" and instance[1] == []


def test_the_rebuild_restores_instances_of_every_use_case(acme, engine, db_url, sql, mail):
    """ANY joins with cancelled losers, a rejection's new round, a restart, an escalation
    after a timeout, a timer and a delivery waiting, a cancelled instance: all columns
    damaged at once, each instance's rebuild is its live projection."""
    docs = acme.documents
    made = []
    for n, total in enumerate((50, 9000, 9000, 9000)):
        doc = docs.create("ap_invoice", {"grand_total": total, "vendor_id": "v-trusted"},
                          actor="clerk", id=f"inv-{n}")  # fmt: skip
        docs.transition(doc.id, "submit", actor="clerk")
        made.append(doc.id)
    for doc_id in made:
        docs.wait(doc_id, timeout=20, until="idle")
    [rejected, approved, restarted] = made[1:]
    by_doc = {r.document_id: r for r in acme.approvals.inbox("reviewer")}
    acme.approvals.decide(by_doc[rejected].id, "rejected", actor="reviewer", entity_version=2)
    acme.approvals.decide(by_doc[approved].id, "approved", actor="reviewer", entity_version=2)
    docs.update(restarted, {"grand_total": 9100}, actor="clerk")
    for n, credit in enumerate((5000, 10)):
        order = {"order_id": f"SO-{n}", "grand_total": 100, "credit_available": credit}
        doc = docs.create("sales_order", order, actor="sales")
        docs.transition(doc.id, "submit", actor="sales")
        made.append(doc.id)
    for n in range(2):
        doc = docs.create("shipment", {"shipment_id": f"S{n}", "carrier": "ACME"}, actor="sales")
        docs.transition(doc.id, "dispatch", actor="sales")
        made.append(doc.id)
    period = {"franchisee": "F-1", "sales": 10, "anomalies": False}
    made.append(docs.create("royalty_period", period, actor="sales").id)
    for doc_id in made:
        docs.wait(doc_id, timeout=20, until="idle")
    acme.events.send("delivery:pod:S0", {"signed_by": "Ann"})
    acme.test_clock.advance(timedelta(days=31))
    try:
        for doc_id in made:
            docs.wait(doc_id, timeout=20, until="idle")
    finally:
        acme.test_clock.reset()
    cancelled = docs.create("shipment", {"shipment_id": "S9", "carrier": "ACME"}, actor="sales")
    docs.transition(cancelled.id, "dispatch", actor="sales")
    acme.cancel(
        docs.wait(cancelled.id, timeout=20, until="idle").workflow.run_id, reason="wrong carrier"
    )
    made.append(cancelled.id)

    runs = {r[0] for r in sql("SELECT id FROM charter.workflow_instances WHERE org_id = 'acme'")}
    assert len(runs) == len(made)
    epochs = set()
    for run in sorted(runs):
        live = snapshot(sql, run)
        epochs.add(live[0][3])
        for table, change in DAMAGE:
            damage(db_url, run, table, change)
        assert acme.health.rebuild(run) is True
        assert snapshot(sql, run) == live, f"instance {run}"
    assert max(epochs) > 1  # the rejection started a new round


# What may happen to an instance of the split workflow, in any order (a step that does not
# apply at that point changes nothing: an event nobody waits for is kept, a decision comes
# only when the approval is outstanding).
STEPS = ["event a", "event b", "pause and resume", "approve", "edit", "cancel"]


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6))
def test_after_any_sequence_the_rebuild_is_the_live_projection(split, engine, db_url, sql, steps):
    acme, docs = split, split.documents
    doc = docs.create("job", {"n": len(steps)}, actor="sales")
    docs.transition(doc.id, "open", actor="sales")
    run = docs.wait(doc.id, timeout=20, until="idle").workflow.run_id
    for step in steps:
        current = docs.get(doc.id)
        if current.workflow is None or current.workflow.status not in ("running", "paused"):
            break
        if step.startswith("event"):
            acme.events.send(f"{step[-1]}:{len(steps)}", {"step": step}, document_id=doc.id)
        elif step == "pause and resume":
            docs.pause(doc.id, actor="boss")
            check_rebuild(db_url, sql, acme, run, f"{steps}: paused")
            docs.resume(doc.id, actor="boss")
        elif step == "approve":
            for request in acme.approvals.inbox("boss"):
                if request.document_id == doc.id:
                    acme.approvals.decide(request.id, "approved", actor="boss",
                                          entity_version=request.entity_version)  # fmt: skip
        elif step == "edit":
            docs.update(doc.id, {"n": len(steps)}, actor="sales")
        else:
            acme.cancel(run, actor="boss", reason="enough")
        docs.wait(doc.id, timeout=20, until="idle")
        check_rebuild(db_url, sql, acme, run, f"{steps}: after {step}")
