"""Seed 002's runtime invariants, each with a test that fails when the behaviour breaks:
WF-02 (one execution per instance, node, token and version), WF-05 (version drift), WF-07
(only verified artifacts run), WF-09 (one evidence row per dispatch), WF-14 (receipt
first) and WF-15 (the projection derives from evidence)."""

from __future__ import annotations

import copy
import hashlib
import threading
import time

import psycopg
import pytest

from charter import Client
from charter.demos.use_cases import invoice_contract, invoice_org


def _run(client, doc_id):
    return client.documents.get(doc_id).workflow.run_id


def _large_invoice_waiting(acme, total=9000):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": total, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    waiting = docs.wait(doc.id, timeout=20)
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    return waiting


def test_wf02_every_execution_carries_the_key_of_instance_node_token_and_version(acme, engine, sql):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 50, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    run = _run(acme, docs.wait(doc.id, timeout=20).id)
    rows = sql(
        "SELECT step_slug, token, entity_version, idempotency_key FROM charter.step_executions "
        "WHERE run_id = %s AND status = 'completed' AND step_slug <> '$instance'",
        run,
    )
    assert len(rows) >= 10
    for node, token, version, key in rows:
        expected = hashlib.sha256(f"{run}|{node}|{token}|{version}".encode()).hexdigest()
        assert key == expected
    receipts = {
        r[0]
        for r in sql("SELECT idempotency_key FROM charter.step_receipts WHERE run_id = %s", run)
    }
    assert {r[3] for r in rows} <= receipts
    # Applying the same events again changes nothing: each is reflected once.
    before = sql("SELECT count(*) FROM charter.step_executions WHERE run_id = %s", run)
    sql(
        "SELECT charter._apply_event(e, ARRAY(SELECT id FROM charter.workflow_versions), '{}') "
        "FROM charter.document_events AS e WHERE e.document_id = %s ORDER BY e.id",
        doc.id,
    )
    assert sql("SELECT count(*) FROM charter.step_executions WHERE run_id = %s", run) == before
    assert len(docs.history(doc.id)) == 4  # create, submit, approve, post: once each


def _apply_events_by_hand(db_url, doc_id, *, plant_receipt_for):
    """What a worker does with a document's events, with one node's receipt planted (as a
    crash after the receipt could leave it) once the instance exists."""
    apply = (
        "SELECT charter._apply_event(%s::charter.document_events, "
        "ARRAY(SELECT id FROM charter.workflow_versions), '{}')"
    )
    with psycopg.connect(db_url, autocommit=True) as conn:
        events = conn.execute(
            "SELECT e FROM charter.document_events AS e WHERE document_id = %s ORDER BY id",
            (doc_id,),
        ).fetchall()
        conn.execute(apply, (events[0][0],))
        [(run,)] = conn.execute(
            "SELECT id FROM charter.workflow_instances WHERE document_id = %s", (doc_id,)
        ).fetchall()
        # The posting action runs on token t1 at version 3 (after submit and approve).
        key = hashlib.sha256(f"{run}|{plant_receipt_for}|t1|3".encode()).hexdigest()
        conn.execute(
            "INSERT INTO charter.step_receipts (run_id, idempotency_key, org_id) "
            "VALUES (%s, %s, 'acme')",
            (run, key),
        )
        for (event,) in events[1:]:
            conn.execute(apply, (event,))


def test_wf14_a_node_whose_receipt_exists_never_runs_its_handler(acme, sql, db_url):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 50, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    _apply_events_by_hand(db_url, doc.id, plant_receipt_for="usr:slot:posting:post")
    done = docs.get(doc.id)
    assert done.state == "active"  # the workflow approved it …
    assert "gl_batch" not in done.data  # … but the action's mutate() never ran
    [(status, error)] = sql(
        "SELECT status, error FROM charter.step_executions WHERE run_id = %s "
        "AND step_slug = 'usr:slot:posting:post'",
        done.workflow.run_id,
    )
    assert status == "cancelled" and error["reason"] == "already executed"


def test_wf05_an_edit_in_the_stable_region_restarts_the_body_on_the_new_version(acme, engine, sql):
    docs = acme.documents
    waiting = _large_invoice_waiting(acme)
    run = waiting.workflow.run_id
    [(first_version,)] = sql(
        "SELECT entity_version FROM charter.approval_requests WHERE run_id = %s", run
    )
    assert first_version == 2
    docs.update(waiting.id, {"grand_total": 9500}, actor="clerk")  # amend_only: allowed
    again = docs.wait(waiting.id, timeout=20)
    assert [w.kind for w in again.workflow.waiting_for] == ["approval"]
    requests = dict(sql(
        "SELECT status, entity_version FROM charter.approval_requests WHERE run_id = %s "
        "ORDER BY created_at", run))  # fmt: skip
    assert requests == {"voided": 2, "pending": 3}
    [(reason,)] = sql(
        "SELECT error FROM charter.step_executions WHERE run_id = %s AND step_slug = "
        "'usr:slot:review:review' AND status = 'cancelled'",
        run,
    )
    assert reason["drift"] == {"from": 2, "to": 3, "event": "on_mutation"}
    restart = sql(
        "SELECT output FROM charter.step_executions WHERE run_id = %s AND step_slug = '$instance'",
        run,
    )
    assert [r[0]["restart"] for r in restart] == ["sys:slot:slot:review:in"]
    # The new round runs on version 3, with a new token.
    [(token, version)] = sql(
        "SELECT token, entity_version FROM charter.step_executions WHERE run_id = %s "
        "AND step_slug = 'usr:slot:review:review' AND status = 'running'",
        run,
    )
    assert (token, version) == ("t2", 3)


def test_wf05_with_an_amendment_branch_the_workflow_takes_it(db_url, engine, monkeypatch):
    contract = invoice_contract()
    contract["entityType"] = "po"
    contract["transitions"].append({"from": "submitted", "to": "draft", "gate": "amend"})
    org = copy.deepcopy(invoice_org())
    org["baseRef"]["entityType"] = "po"
    contract["actions"] = [{"actionType": "po.post", "fields": ["gl_batch", "posted_at"]}]
    contract["policies"]["po.post"] = contract["policies"].pop("ap_invoice.post")
    org["slots"]["slot:posting"]["nodes"][0]["config"]["actionType"] = "po.post"
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(contract)
        client.definitions.publish(contract, org)
        client.directory.put_user("clerk", roles=["ap_clerk"])
        client.directory.put_user("reviewer", roles=["ap_clerk"])  # approves the clerk's
        docs = client.documents
        doc = docs.create("po", {"grand_total": 9000, "vendor_id": "v-1"}, actor="clerk")
        docs.transition(doc.id, "submit", actor="clerk")
        docs.wait(doc.id, timeout=20)
        docs.update(doc.id, {"grand_total": 9100}, actor="clerk")
        back = docs.wait(doc.id, timeout=20)
        assert back.state == "draft"
        last = docs.history(doc.id)[-1]
        assert (last.action, last.actor, last.via) == ("amend", "system", "workflow")
        assert [w.kind for w in back.workflow.waiting_for] == ["transition"]
        # Submitting again asks for approval on the new version.
        docs.transition(doc.id, "submit", actor="clerk")
        assert [w.kind for w in docs.wait(doc.id, timeout=20).workflow.waiting_for] == ["approval"]


def test_wf05_drift_fails_the_instance_where_work_cannot_be_withdrawn(acme, engine, sql):
    docs = acme.documents
    order = {"order_id": "SO-9", "grand_total": 100, "credit_available": 10}
    doc = docs.create("sales_order", order, actor="sales")
    docs.transition(doc.id, "submit", actor="sales")
    waiting = docs.wait(doc.id, timeout=20)
    run = waiting.workflow.run_id
    # A handler task of the stable region that a worker already took cannot be withdrawn.
    sql(
        "UPDATE charter.instance_waits SET kind = 'handler', worker_id = 'w-1', due_at = NULL "
        "WHERE run_id = %s",
        run,
    )
    docs.update(doc.id, {"credit_available": 500}, actor="sales")
    failed = docs.wait(doc.id, timeout=20)
    assert failed.workflow.status == "failed"
    assert failed.workflow.error["sqlstate"] == "CH043"
    assert "cannot be withdrawn" in failed.workflow.error["message"]


def test_wf07_a_tampered_artifact_never_runs(acme, sql, db_url):
    version = acme.definitions.current("shipment").version_id
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SELECT set_config('charter.recompiling', %s, false)", (version,))
        conn.execute(
            "UPDATE charter.workflow_versions SET compiled = jsonb_set(compiled, "
            "'{nodes,usr:slot:confirmation:escalate,config,to}', '\"attacker@example.com\"') "
            "WHERE id = %s",
            (version,),
        )
    doc = acme.documents.create("shipment", {"shipment_id": "S9"}, actor="sales")
    from tests.workers import running_worker

    with running_worker(db_url, poll_interval=0.05):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            [(status, error)] = sql(
                "SELECT status, error FROM charter.document_events WHERE document_id = %s", doc.id
            )
            if status == "failed" and "refused" in (error or ""):
                break
            time.sleep(0.05)
    assert "WORKFLOW_HASH_MISMATCH" in error
    assert acme.documents.get(doc.id).workflow.run_id is None  # no instance of it


def test_wf09_one_evidence_row_per_node_dispatch(acme, engine, sql):
    docs = acme.documents
    for total in (50, 9000):
        doc = docs.create(
            "ap_invoice", {"grand_total": total, "vendor_id": "v-trusted"}, actor="clerk"
        )
        docs.transition(doc.id, "submit", actor="clerk")
        run = _run(acme, docs.wait(doc.id, timeout=20).id)
        dupes = sql(
            "SELECT step_slug, token, entity_version, count(*) FROM charter.step_executions "
            "WHERE run_id = %s GROUP BY 1, 2, 3 HAVING count(*) > 1",
            run,
        )
        assert dupes == []
        unrecorded = sql(
            "SELECT s.step_slug FROM charter.step_states AS s WHERE s.run_id = %s "
            "AND s.status NOT IN ('waiting', 'ready') AND NOT EXISTS (SELECT 1 FROM "
            "charter.step_executions AS e WHERE e.run_id = s.run_id AND e.step_slug = s.step_slug)",
            run,
        )
        assert unrecorded == []


def _projections_agree(sql, run):
    [(live, derived)] = sql(
        "SELECT (SELECT to_jsonb(current_nodes) FROM charter.workflow_instances WHERE id = %s), "
        "charter.compute_instance_projection(%s)->'currentNodes'",
        run,
        run,
    )
    assert live == derived
    return live


def test_wf15_the_projection_is_derived_from_evidence_after_every_advance(acme, engine, sql):
    docs = acme.documents
    big = _large_invoice_waiting(acme)
    run = big.workflow.run_id
    assert _projections_agree(sql, run) == ["sys:state:submitted", "usr:slot:review:review"]
    docs.update(big.id, {"grand_total": 9100}, actor="clerk")  # a restart
    docs.wait(big.id, timeout=20)
    _projections_agree(sql, run)
    data = {"order_id": "SO-3", "grand_total": 1, "credit_available": 0}
    order = docs.create("sales_order", data, actor="sales")
    docs.transition(order.id, "submit", actor="sales")
    run_b = docs.wait(order.id, timeout=20).workflow.run_id
    assert "usr:slot:fulfil:payment_required" in _projections_agree(sql, run_b)
    acme.events.send("payment:SO-3")
    assert docs.wait(order.id, timeout=20).state == "confirmed"
    assert _projections_agree(sql, run_b) == []
    # Damage the live projection; the rebuild restores it from evidence.
    sql("UPDATE charter.workflow_instances SET current_nodes = '{sys:end}' WHERE id = %s", run)
    sql("SELECT charter.rebuild_instance_projection(%s)", run)
    assert _projections_agree(sql, run) == ["sys:state:submitted", "usr:slot:review:review"]


def test_status_only_moves_forward(acme, engine, sql):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 50, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    run = _run(acme, docs.wait(doc.id, timeout=20).id)
    with pytest.raises(psycopg.Error, match="terminal states are final"):
        sql(
            "UPDATE charter.workflow_instances SET status = 'running', completed_at = NULL "
            "WHERE id = %s",
            run,
        )
    with pytest.raises(psycopg.Error, match="cannot become"):
        sql("UPDATE charter.document_events SET status = 'pending' WHERE document_id = %s", doc.id)
    with pytest.raises(psycopg.Error, match="append-only"):
        sql("UPDATE charter.step_executions SET status = 'failed' WHERE run_id = %s "
            "AND status = 'completed'", run)  # fmt: skip


def test_the_workflows_own_events_are_written_applied_and_the_users_are_applied_once(
    acme, engine, sql
):
    """Fast-lane invoices created and submitted from four threads while the engine runs: the
    events of the workflow's own mutations (its approval and the posting action) are in the
    outbox as completed, never claimed; the user's events were claimed and applied; every
    instance has seen its document's last version, and the audit names who did what."""
    docs = acme.documents
    ids: list[str] = []
    lock = threading.Lock()

    def submit(n: int) -> None:
        for i in range(5):
            doc = docs.create(
                "ap_invoice",
                {"grand_total": 100 + n * 10 + i, "vendor_id": "v-trusted"},
                actor="clerk",
            )
            docs.transition(doc.id, "submit", actor="clerk")
            with lock:
                ids.append(doc.id)

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for doc_id in ids:
        done = docs.wait(doc_id, timeout=30)
        assert done.state == "active" and "gl_batch" in done.data
    events = sql(
        "SELECT e.document_id, e.entity_version, e.status, e.attempts, e.worker_id IS NULL,"
        " a.via FROM charter.document_events AS e"
        " JOIN charter.document_audit AS a ON a.org_id = e.org_id"
        "  AND a.document_id = e.document_id AND a.version = e.entity_version"
        " WHERE e.document_id = ANY (%s) ORDER BY e.document_id, e.entity_version",
        ids,
    )
    assert len(events) == 4 * len(ids)  # create, submit, approve, post
    for _doc, version, status, attempts, unclaimed, via in events:
        assert status == "completed"
        if via == "workflow":
            assert (attempts, unclaimed) == (0, True), version
        else:
            assert via == "api" and attempts >= 1 and not unclaimed, version
    assert sorted({v for *_, v in events}) == ["api", "workflow"]
    behind = sql(
        "SELECT count(*) FROM charter.workflow_instances AS i JOIN charter.documents AS d"
        " ON d.org_id = i.org_id AND d.id = i.document_id"
        " WHERE d.id = ANY (%s) AND i.document_version <> d.version",
        ids,
    )
    assert behind == [(0,)]
    for doc_id in ids:
        assert [(h.action, h.via) for h in docs.history(doc_id)] == [
            ("create", "api"),
            ("submit", "api"),
            ("approve", "workflow"),
            ("ap_invoice.post", "workflow"),
        ]
