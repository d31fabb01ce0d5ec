"""Cancel means cancel; pause, resume and restart (issue #36 § 4).

Cancelling a document's instance closes its approval requests (a decision afterwards is
APPROVAL_CLOSED), drops its waits, cancels its side effects not yet handed to delivery and
leaves the document in its state with an audit row — also when decisions and the engine
race with it. A paused instance runs nothing (events held, timers not fired, deliveries
held, transitions refused with WORKFLOW_PAUSED) until resumed. A restart starts a fresh
instance on the org's current workflow at the document's state."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import pytest

from charter import Client
from charter.errors import (
    ApprovalClosedError,
    ArgumentError,
    DocumentNotFoundError,
    RunStateError,
    WorkflowPausedError,
)
from tests import runtime_definitions as defs

VERIFIED = "(SELECT array_agg(id) FROM charter.workflow_versions)"


def _waiting_for_approval(client, total=9000):
    docs = client.documents
    doc = docs.create("ap_invoice", {"grand_total": total, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    waiting = docs.wait(doc.id, timeout=20)
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    [request] = [r for r in client.approvals.history(doc.id) if r.status == "pending"]
    return waiting, request


def _versions(sql, doc_id):
    return sql("SELECT max(version) FROM charter.document_versions WHERE document_id = %s", doc_id)[
        0
    ][0]


# -- cancel --------------------------------------------------------------------------------


def test_cancel_closes_approvals_drops_waits_and_leaves_the_document_with_an_audit_row(
    acme, engine, sql
):
    acme.directory.put_user("reviewer", roles=["ap_clerk"])
    waiting, request = _waiting_for_approval(acme)
    run = waiting.workflow.run_id
    assert acme.cancel(run, actor="boss", reason="wrong vendor") == "cancelled"
    with pytest.raises(ApprovalClosedError):
        acme.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    assert acme.approvals.get(request.id).status == "cancelled"
    assert sql("SELECT count(*) FROM charter.instance_waits WHERE run_id = %s", run) == [(0,)]
    after = acme.documents.wait(waiting.id, timeout=20)
    assert (after.state, after.version) == ("submitted", 2)  # its lifecycle state, as it was
    assert (after.workflow.status, after.workflow.cancel_reason) == ("cancelled", "wrong vendor")
    last = acme.documents.history(waiting.id)[-1]
    assert (last.action, last.actor, last.reason, last.version) == (
        "instance.cancel", "boss", "wrong vendor", 2
    )  # fmt: skip
    assert last.changes == {"$instance": {"runId": run, "from": "running", "to": "cancelled"}}
    assert acme.get_run(run).status == "cancelled"
    # Cancelling again changes nothing; the document's later changes wake no instance.
    assert acme.cancel(run, actor="boss") == "cancelled"
    acme.documents.update(waiting.id, {"grand_total": 9100}, actor="clerk")
    assert acme.documents.wait(waiting.id, timeout=20).workflow.status == "cancelled"
    assert [e.action for e in acme.documents.history(waiting.id)].count("instance.cancel") == 1


def test_cancel_without_an_actor_names_the_database_role(acme, engine, db_url):
    waiting, _ = _waiting_for_approval(acme)
    acme.cancel(waiting.workflow.run_id)
    last = acme.documents.history(waiting.id)[-1]
    with psycopg.connect(db_url) as conn:
        role = conn.execute("SELECT session_user").fetchone()[0]
    assert (last.action, last.actor) == ("instance.cancel", role)
    assert last.reason == f"cancelled by {role}"


def test_a_finished_instance_cannot_be_cancelled(acme, engine):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 50, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    done = docs.wait(doc.id, timeout=20)
    assert done.workflow.status == "completed"
    with pytest.raises(RunStateError, match="only a running or paused one can be cancelled"):
        acme.cancel(done.workflow.run_id, actor="boss")
    with pytest.raises(ArgumentError, match="reason"):
        acme.cancel(done.workflow.run_id, actor="boss", reason="x" * 2001)


def test_no_decision_after_a_cancel_moves_the_document_racing_decisions_and_the_engine(
    db_url, acme, engine, sql
):
    """Each document's cancel races its approver's decision (the engine running): a decision
    that comes after the cancel is refused, and no document changes after its cancel."""
    acme.directory.put_user("reviewer", roles=["ap_clerk"])
    waiting = [_waiting_for_approval(acme) for _ in range(6)]
    outcomes: dict[str, str] = {}
    cancels: dict[str, str] = {}
    start = threading.Barrier(2 * len(waiting))

    def cancel(doc_id, run):
        with Client(db_url, org_id="acme") as client:
            start.wait()
            try:
                client.cancel(run, actor="boss", reason="stop")
                cancels[doc_id] = "cancelled"
            except RunStateError:  # the decision won, and the engine finished the instance
                cancels[doc_id] = "refused"

    def decide(doc_id, request):
        with Client(db_url, org_id="acme") as client:
            start.wait()
            try:
                client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
                outcomes[doc_id] = "decided"
            except ApprovalClosedError:
                outcomes[doc_id] = "closed"

    threads = [
        threading.Thread(target=cancel, args=(doc.id, doc.workflow.run_id)) for doc, _ in waiting
    ]
    threads += [threading.Thread(target=decide, args=(doc.id, req)) for doc, req in waiting]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(outcomes) == len(cancels) == len(waiting)
    for doc, _ in waiting:
        after = acme.documents.wait(doc.id, timeout=20)
        audit = [e for e in acme.documents.history(doc.id) if e.action == "instance.cancel"]
        if cancels[doc.id] == "refused":
            # Decided first, and the engine approved it before the cancel came.
            assert outcomes[doc.id] == "decided" and after.workflow.status == "completed"
            assert audit == []
            continue
        # Cancelled: the instance is over, and nothing moved the document afterwards.
        assert after.workflow.status == "cancelled"
        assert len(audit) == 1 and _versions(sql, doc.id) == audit[0].version == after.version
        if outcomes[doc.id] == "closed":  # the decision came after the cancel
            assert (after.state, after.version) == ("submitted", 2)
        assert sql(
            "SELECT count(*) FROM charter.instance_waits WHERE run_id = %s", doc.workflow.run_id
        ) == [(0,)]


def _notice_with_webhook(client):
    """A notice whose open state sends a webhook to a port nobody listens on."""
    contract = defs.contract("notice", {"code": "string"})
    nodes = [
        ("send", "webhook_out", {"url": "http://127.0.0.1:9/hooks/{entity.code}",
                                 "payloadTemplate": {"code": "entity.code"}}),
        ("sent", "script", {"expression": "true", "assignTo": "context.sent"}),
    ]  # fmt: skip
    client.definitions.publish(contract)
    client.definitions.publish(
        contract, defs.org_definition("notice", nodes, [("send", "sent", {})])
    )


def _engine_round(conn):
    """What the documents engine does, by hand (no side-effects worker): apply the events,
    fire the due waits."""
    conn.execute(
        "SELECT charter.apply_document_events(coalesce(jsonb_agg(to_jsonb(c)), '[]'), "
        f"{VERIFIED}) FROM charter.claim_document_events('engine', 100, 30) AS c"
    )
    conn.execute(f"SELECT charter.fire_due_waits(100, {VERIFIED})")


def test_no_side_effect_not_yet_delivered_is_sent_after_a_cancel_racing_the_delivery_worker(
    acme, db_url, sql
):
    """A delivery worker claims and fails (retryably) the instances' webhooks in a loop while
    they are cancelled: after each cancel, none of its effects is claimed again, and each
    ends cancelled (or, being sent during the cancel, answered once and then cancelled)."""
    _notice_with_webhook(acme)
    docs = []
    for n in range(4):
        doc = acme.documents.create("notice", {"code": f"N{n}"}, actor="sales")
        acme.documents.transition(doc.id, "open", actor="sales")
        docs.append(doc)
    with psycopg.connect(db_url, autocommit=True) as conn:
        for _ in range(2):  # each document's create, then its transition
            _engine_round(conn)
    runs = [acme.documents.get(d.id).workflow.run_id for d in docs]
    pending = sql(
        "SELECT count(*) FROM charter.side_effects WHERE run_id = ANY(%s) AND status = 'pending'",
        runs,
    )
    assert pending == [(len(docs),)]
    sql("UPDATE charter.side_effects SET max_attempts = 1000 WHERE run_id = ANY(%s)", runs)
    cancelled: list[str] = []  # appended by this thread, copied by the worker's
    late: list[str] = []
    crashed: list[BaseException] = []
    rounds = [0]
    stop = threading.Event()
    fail = '{"ok": false, "retry": true, "error": "connection refused"}'

    def deliver():
        try:
            claim_and_fail()
        except BaseException as exc:  # surfaced below
            crashed.append(exc)

    def claim_and_fail():
        with psycopg.connect(db_url, autocommit=True) as conn:
            while not stop.is_set():
                done_before = cancelled[:]  # cancels committed before this claim
                rows = conn.execute(
                    "SELECT c->>'id', c->>'runId', c->>'orgId', c->>'createdAt' FROM "
                    "charter.claim_side_effects('w1', ARRAY['webhook'], 10, 30) AS c"
                ).fetchall()
                for effect, run, org, created in rows:
                    if run in done_before:
                        late.append(effect)
                    [(answer,)] = conn.execute(
                        "SELECT charter.finish_side_effect(%s, 'w1', %s::jsonb, %s, %s)",
                        (effect, fail, org, created),
                    ).fetchall()
                    if answer == "retry":  # the receiver keeps failing: due again at once
                        conn.execute(
                            "UPDATE charter.side_effects SET next_retry_at = now() "
                            "WHERE id = %s AND status = 'failed'",
                            (effect,),
                        )
                rounds[0] += 1

    worker = threading.Thread(target=deliver)
    worker.start()
    try:
        for run in runs:
            acme.cancel(run, actor="boss", reason="stop")
            cancelled.append(run)
        seen = rounds[0]
        while rounds[0] < seen + 20 and worker.is_alive():
            stop.wait(0.01)
    finally:
        stop.set()
        worker.join(30)
    assert crashed == [] and late == []
    statuses = sql("SELECT DISTINCT status FROM charter.side_effects WHERE run_id = ANY(%s)", runs)
    assert statuses == [("cancelled",)]
    # The engine finds nothing to resume for them either.
    with psycopg.connect(db_url, autocommit=True) as conn:
        _engine_round(conn)
    assert {acme.documents.get(d.id).workflow.status for d in docs} == {"cancelled"}


# -- pause and resume ----------------------------------------------------------------------


def _notice_with_timer(client):
    """A notice whose open state waits an hour, then marks the context."""
    contract = defs.contract("notice", {"code": "string", "note": "string"})
    nodes = [
        ("nap", "wait_timer", {"duration": "PT1H"}),
        ("woke", "script", {"expression": "true", "assignTo": "context.woke"}),
    ]
    client.definitions.publish(contract)
    client.definitions.publish(
        contract, defs.org_definition("notice", nodes, [("nap", "woke", {})])
    )


def _projection(sql, run):
    [(status, live, derived)] = sql(
        "SELECT i.status, to_jsonb(i.current_nodes), p->'currentNodes' "
        "FROM charter.workflow_instances AS i, charter.compute_instance_projection(i.id) AS p "
        "WHERE i.id = %s",
        run,
    )
    assert live == derived  # WF-15 holds through a pause
    return status, sql("SELECT charter.compute_instance_projection(%s)->>'status'", run)[0][0]


def test_a_paused_instance_fires_no_timer_until_resumed_then_the_due_one_fires(acme, db_url, sql):
    _notice_with_timer(acme)
    docs = acme.documents
    doc = docs.create("notice", {"code": "T1"}, actor="sales")
    docs.transition(doc.id, "open", actor="sales")
    with psycopg.connect(db_url, autocommit=True) as engine:
        for _ in range(2):
            _engine_round(engine)
        waiting = docs.get(doc.id).workflow
        assert [w.kind for w in waiting.waiting_for] == ["timer"]
        paused = docs.pause(doc.id, actor="boss", reason="vendor dispute")
        assert paused.workflow.status == "paused" and paused.workflow.runnable is False
        assert _projection(sql, waiting.run_id) == ("paused", "paused")
        assert docs.pause(doc.id, actor="boss").workflow.status == "paused"  # a no-op
        try:
            acme.test_clock.advance(timedelta(hours=2))
            _engine_round(engine)
            still = docs.get(doc.id).workflow
            assert [w.kind for w in still.waiting_for] == ["timer"] and "woke" not in still.context
            resumed = docs.resume(doc.id, actor="boss", reason="settled")
            assert resumed.workflow.status == "running" and resumed.workflow.runnable is True
            _engine_round(engine)
        finally:
            acme.test_clock.reset()
    done = docs.get(doc.id).workflow
    assert done.context["woke"] is True
    assert _projection(sql, done.run_id)[0] == done.status
    acts = [(e.action, e.actor, e.reason) for e in docs.history(doc.id)]
    assert [a for a in acts if a[0].startswith("instance.")] == [
        ("instance.pause", "boss", "vendor dispute"), ("instance.resume", "boss", "settled")
    ]  # fmt: skip


def test_a_paused_instance_holds_its_events_and_refuses_transitions(acme, db_url, sql):
    _notice_with_timer(acme)
    docs = acme.documents
    doc = docs.create("notice", {"code": "E1"}, actor="sales")
    with psycopg.connect(db_url, autocommit=True) as engine:
        _engine_round(engine)
        run = docs.get(doc.id).workflow.run_id
        docs.pause(doc.id, actor="boss")
        before = sql(
            "SELECT count(*) FROM charter.document_versions WHERE document_id = %s", doc.id
        )
        with pytest.raises(WorkflowPausedError, match="paused") as refused:
            docs.transition(doc.id, "open", actor="sales")
        assert run in str(refused.value) and "resume" in str(refused.value)
        assert (
            sql("SELECT count(*) FROM charter.document_versions WHERE document_id = %s", doc.id)
            == before
        )
        # Edits are still allowed; the instance sees them only once resumed, in order.
        docs.update(doc.id, {"note": "a"}, actor="sales")
        docs.update(doc.id, {"note": "b"}, actor="sales")
        _engine_round(engine)
        _engine_round(engine)
        held = sql(
            "SELECT status, attempts, next_retry_at = 'infinity' FROM charter.document_events "
            "WHERE document_id = %s AND event_type = 'on_mutation' ORDER BY id",
            doc.id,
        )
        assert held == [("pending", 0, True), ("pending", 0, False)]
        paused = docs.get(doc.id)
        assert (paused.workflow.document_version, paused.workflow.runnable) == (1, False)
        docs.resume(doc.id, actor="boss")
        for _ in range(2):
            _engine_round(engine)
        assert docs.get(doc.id).workflow.document_version == 3
        assert docs.transition(doc.id, "open", actor="sales").state == "open"


def test_a_paused_instance_delivers_nothing_until_resumed(acme, db_url, sql):
    _notice_with_webhook(acme)
    doc = acme.documents.create("notice", {"code": "W1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    claim = (
        "SELECT c->>'runId' FROM charter.claim_side_effects('w1', ARRAY['webhook'], 10, 30) AS c"
    )
    with psycopg.connect(db_url, autocommit=True) as engine:
        for _ in range(2):
            _engine_round(engine)
    run = acme.documents.get(doc.id).workflow.run_id
    acme.documents.pause(doc.id, actor="boss")
    assert sql(claim) == []
    acme.documents.resume(doc.id, actor="boss")
    assert sql(claim) == [(run,)]


def test_a_paused_instances_python_action_is_not_claimed_until_resumed(acme, db_url, sql):
    contract = defs.contract("notice", {"code": "string"})
    node = ("fee", "action", {"actionType": "notice.compute_fee", "runAs": "system",
                              "payloadTemplate": {"rate": "0.05"}})  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("notice", [node], []))
    doc = acme.documents.create("notice", {"code": "A1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    with psycopg.connect(db_url, autocommit=True) as engine:
        for _ in range(2):
            _engine_round(engine)
    claim = (
        "SELECT c->>'runId' FROM "
        "charter.claim_action_tasks('w1', ARRAY['notice.compute_fee'], 10, 30) AS c"
    )
    run = acme.documents.get(doc.id).workflow.run_id
    acme.documents.pause(doc.id, actor="boss")
    assert sql(claim) == []
    acme.documents.resume(doc.id, actor="boss")
    assert sql(claim) == [(run,)]


def test_pause_and_resume_refuse_what_they_cannot_do(acme, engine):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 50, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    assert docs.wait(doc.id, timeout=20).workflow.status == "completed"
    with pytest.raises(RunStateError, match="no running workflow instance to pause"):
        docs.pause(doc.id, actor="boss")
    with pytest.raises(RunStateError, match="no paused workflow instance to resume"):
        docs.resume(doc.id, actor="boss")
    with pytest.raises(DocumentNotFoundError):
        docs.pause("no-such-document", actor="boss")
    with pytest.raises(ArgumentError, match="actor"):
        docs.pause(doc.id, actor="")
    # A paused instance is not stuck: force-failing it is refused (resume or cancel it).
    waiting, _ = _waiting_for_approval(acme)
    docs.pause(waiting.id, actor="boss")
    with pytest.raises(RunStateError, match="paused"):
        acme.health.force_fail(waiting.workflow.run_id, "stuck?")
    assert acme.cancel(waiting.workflow.run_id, actor="boss") == "cancelled"


# -- restart -------------------------------------------------------------------------------


def test_restart_after_a_mistaken_cancel_starts_again_at_the_documents_state(acme, engine, sql):
    acme.directory.put_user("reviewer", roles=["ap_clerk"])
    waiting, request = _waiting_for_approval(acme)
    old = waiting.workflow.run_id
    acme.cancel(old, actor="boss", reason="by mistake")
    with pytest.raises(ApprovalClosedError):
        acme.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    restarted = acme.documents.restart(waiting.id, actor="boss", reason="cancelled by mistake")
    new = restarted.workflow
    assert new.run_id != old and new.status == "running" and restarted.state == "submitted"
    assert new.version_id == acme.definitions.current("ap_invoice").version_id
    with pytest.raises(RunStateError, match="already has a running workflow instance"):
        acme.documents.restart(waiting.id, actor="boss")
    again = acme.documents.wait(waiting.id, timeout=20)
    assert [w.kind for w in again.workflow.waiting_for] == ["approval"]
    assert _projection(sql, new.run_id) == ("running", "running")  # replayed from its state
    [fresh] = [r for r in acme.approvals.history(waiting.id) if r.status == "pending"]
    assert fresh.id != request.id and fresh.requester == "clerk"  # the instance's driver
    acme.approvals.decide(fresh.id, "approved", actor="reviewer", entity_version=2)
    done = acme.documents.wait(waiting.id, timeout=20)
    assert (done.state, done.workflow.status) == ("active", "completed")
    ran = {row[0] for row in sql(
        "SELECT step_slug FROM charter.step_executions WHERE run_id = %s", new.run_id
    )}  # fmt: skip
    assert "sys:state:submitted" in ran and not ran & {"sys:start", "sys:state:draft"}
    [audit] = [e for e in acme.documents.history(waiting.id) if e.action == "instance.restart"]
    assert (audit.actor, audit.reason, audit.version) == ("boss", "cancelled by mistake", 2)
    assert audit.changes["$instance"]["restartedFrom"] == old


def test_restart_moves_a_failed_instance_onto_a_fixed_definition(acme, engine):
    contract = defs.contract("grant", {"amount": "number"})
    broken = defs.org_definition(
        "grant", [("ok", "approval", {"mode": "inline", "approvers": [{"role": "nobody"}]})], []
    )
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, broken)
    doc = acme.documents.create("grant", {"amount": 1}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed"
    fixed = defs.org_definition(
        "grant", [("ok", "approval", {"mode": "inline", "approvers": [{"role": "warehouse"}]})], []
    )
    published = acme.definitions.publish(contract, fixed)
    moved = acme.documents.restart(doc.id, actor="boss", reason="approvers fixed")
    assert moved.workflow.version_id == published.version_id != failed.version_id
    waiting = acme.documents.wait(doc.id, timeout=20)
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    with pytest.raises(RunStateError, match="restarted"):
        acme.retry(failed.run_id)
    [request] = acme.approvals.history(doc.id)
    acme.approvals.decide(request.id, "approved", actor="wh", entity_version=2)
    done = acme.documents.wait(doc.id, timeout=20)
    assert (done.state, done.workflow.status) == ("done", "completed")
