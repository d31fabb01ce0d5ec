"""Retention (`charter maintenance`, and the worker hourly): flow runs finished before the
window and outbox receipts written before it are forgotten, delivered outbox rows are
pruned, old monthly partitions are dropped whole — and everything inside the window still
deduplicates; nothing a live run or an undelivered effect needs goes, and a document's
evidence (versions, audit, approvals, its instances' steps, receipts and side effects) is
never deleted, only archived on request (`--archive-before`), where it is still read."""

from __future__ import annotations

import json
import time

from charter.cli import main
from tests import runtime_definitions as defs
from tests.workers import running_worker


def _finished_document(acme):
    contract = defs.contract("memo", {"code": "string"})
    nodes = [("mark", "script", {"expression": "true", "assignTo": "context.marked"})]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("memo", nodes, []))
    doc = acme.documents.create("memo", {"code": "R1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    return acme.documents.wait(doc.id, timeout=20)


def test_maintenance_forgets_only_what_is_older_than_the_window(acme, engine, sql, db_url, capsys):
    done = _finished_document(acme)
    run_id = done.workflow.run_id
    assert sql("SELECT count(*) FROM charter.step_receipts WHERE run_id = %s", run_id)[0][0] > 0
    # The instance finished long ago.
    sql("UPDATE charter.runs SET finished_at = now() - interval '200 days' WHERE id = %s", run_id)
    # An app webhook key used long ago (its row pruned since) and one used now.
    sql("INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key, created_at)"
        " VALUES ('acme', 'side_effects', 'app:old', now() - interval '120 days')")  # fmt: skip
    old = acme.side_effects.webhook("http://127.0.0.1:9/old", {}, idempotency_key="old")
    assert old.status == "duplicate"
    acme.side_effects.webhook("http://127.0.0.1:9/new", {}, idempotency_key="new", max_attempts=1)
    # Delivered long ago (pruned) and dead long ago (kept until dropped).
    for status in ("completed", "dead_letter"):
        sql(
            "INSERT INTO charter.side_effects (org_id, effect_type, request, idempotency_key,"
            " status, created_at, completed_at) VALUES ('acme', 'webhook', '{}', %s, %s,"
            " now() - interval '150 days', now() - interval '150 days')",
            f"aged-{status}",
            status,
        )
    # Old monthly partitions: one holding only delivered rows, one holding a dead letter.
    for month, status in (("2001_01", "completed"), ("2001_02", "dead_letter")):
        start = month.replace("_", "-") + "-01"
        sql(f"CREATE TABLE charter.side_effects_{month} PARTITION OF charter.side_effects"
            f" FOR VALUES FROM ('{start}') TO ('{start}'::date + interval '1 month')")  # fmt: skip
        sql(
            "INSERT INTO charter.side_effects (org_id, effect_type, request, idempotency_key,"
            " status, created_at, completed_at) VALUES ('acme', 'webhook', '{}', %s, %s, %s, %s)",
            f"p-{month}", status, f"{start} 12:00+00", f"{start} 12:00+00",
        )  # fmt: skip
    sql("CREATE TABLE charter.step_executions_2001_01 PARTITION OF charter.step_executions"
        " FOR VALUES FROM ('2001-01-01') TO ('2001-02-01')")  # fmt: skip

    assert main(["--database-url", db_url, "maintenance", "--retention-days", "90", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # The instance's receipts are a document's evidence: kept, however old.
    assert report["receiptsPruned"] == {"steps": 0, "outbox": 1}
    # aged-completed (2001_01's delivered row went with its partition, dropped whole first)
    assert report["deliveredRowsPruned"]["sideEffects"] >= 1
    assert sorted(report["partitionsDropped"]) == [
        "side_effects_2001_01",
        "step_executions_2001_01",
    ]
    assert [k["partition"] for k in report["partitionsKept"]] == ["side_effects_2001_02"]

    assert sql("SELECT count(*) FROM charter.step_receipts WHERE run_id = %s", run_id)[0][0] > 0
    keys = {k for (k,) in sql("SELECT idempotency_key FROM charter.side_effects")}
    assert "aged-completed" not in keys and "aged-dead_letter" in keys and "p-2001_02" in keys
    assert sql("SELECT to_regclass('charter.side_effects_2001_01')") == [(None,)]
    # Inside the window a key still deduplicates; outside it, it is a new webhook.
    assert (
        acme.side_effects.webhook("http://127.0.0.1:9/new", {}, idempotency_key="new").status
        == "duplicate"
    )
    assert (
        acme.side_effects.webhook("http://127.0.0.1:9/old", {}, idempotency_key="old").status
        == "queued"
    )
    # The document's history (evidence, versions) is untouched.
    assert len(acme.get_run(run_id).steps) > 0


def test_the_worker_runs_maintenance_on_its_own(db_url, monkeypatch, sql):
    monkeypatch.setenv("CHARTER_MAINTENANCE_INTERVAL", "0.2")
    sql("INSERT INTO charter.outbox_receipts (org_id, source, idempotency_key, created_at)"
        " VALUES ('acme', 'side_effects', 'ancient', now() - interval '1000 days')")  # fmt: skip
    with running_worker(db_url, poll_interval=0.05) as worker:
        deadline = time.monotonic() + 20
        while (done := worker.documents.maintenance) is None or done.last_report is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert sql(
        "SELECT count(*) FROM charter.outbox_receipts WHERE idempotency_key = 'ancient'"
    ) == [(0,)]


def test_retention_refuses_a_window_shorter_than_a_day(db_url, capsys):
    assert main(["--database-url", db_url, "maintenance", "--retention-days", "0"]) == 1
    assert "at least 1 day" in capsys.readouterr().err
