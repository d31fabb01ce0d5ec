"""The command line for document workflows: `charter status --document`, `charter schedules
list`, `charter compile-effective --mermaid --instance`, `charter demo documents`, and
`charter worker` with no module (the documents engine alone)."""

from __future__ import annotations

import json
import subprocess
import sys

from charter.demos.use_cases import invoice_contract, invoice_org
from tests.integration.helpers import charter_env, run_charter


def _env(db_url, **extra):
    # A wide terminal, so rich's tables do not cut the ids the tests look for.
    return charter_env(CHARTER_DATABASE_URL=db_url, COLUMNS="250", **extra)


def test_status_of_a_document_shows_where_its_workflow_waits(acme, engine, db_url):
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 9000, "vendor_id": "v"}, actor="clerk"
    )
    acme.documents.transition(doc.id, "submit", actor="clerk")
    acme.documents.wait(doc.id, timeout=20)
    shown = run_charter("status", "--document", doc.id, "--org", "acme", env=_env(db_url))
    assert shown.returncode == 0, shown.stderr
    assert "state submitted" in shown.stdout
    assert "waits for approval at usr:slot:review:review" in shown.stdout
    assert "usr:slot:review:fast_lane" in shown.stdout  # the node executions follow
    as_json = run_charter(
        "status", "--document", doc.id, "--org", "acme", "--json", env=_env(db_url)
    )
    data = json.loads(as_json.stdout)
    assert data["document"]["workflow"]["waiting_for"][0]["kind"] == "approval"
    assert data["run"]["steps"][0]["slug"] == "sys:start"
    neither = run_charter("status", env=_env(db_url))
    assert neither.returncode != 0 and "--document" in neither.stderr


def test_mermaid_colours_an_instances_position(acme, engine, db_url, tmp_path):
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 9000, "vendor_id": "v"}, actor="clerk"
    )
    acme.documents.transition(doc.id, "submit", actor="clerk")
    run_id = acme.documents.wait(doc.id, timeout=20).workflow.run_id
    (tmp_path / "contract.json").write_text(json.dumps(invoice_contract()))
    (tmp_path / "org.json").write_text(json.dumps(invoice_org()))
    drawn = run_charter(
        "compile-effective", str(tmp_path / "contract.json"), str(tmp_path / "org.json"),
        "--mermaid", "--instance", run_id, env=_env(db_url),
    )  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    lines = drawn.stdout.splitlines()
    assert any(line.strip().startswith("classDef current") for line in lines)
    current = next(
        line for line in lines if line.strip().startswith("class ") and " current" in line
    )
    names = current.split()[1].split(",")
    review = next(line for line in lines if '"usr:slot:review:review<br/>' in line)
    assert review.strip().split("[")[0] in names
    refused = run_charter(
        "compile-effective", str(tmp_path / "contract.json"), "--instance", run_id,
        env=_env(db_url),
    )  # fmt: skip
    assert refused.returncode != 0 and "--mermaid" in refused.stderr


def test_schedules_list(acme, db_url):
    acme.schedules.put("periods", "0 6 1 * *", entity_type="royalty_period", action="create")
    shown = run_charter("schedules", "list", "--org", "acme", env=_env(db_url))
    assert shown.returncode == 0, shown.stderr
    assert "periods" in shown.stdout and "royalty_period create" in shown.stdout
    empty = run_charter("schedules", "list", "--org", "nobody", env=_env(db_url))
    assert "has no schedules" in empty.stdout
    gone = run_charter("schedules", "delete", "periods", "--org", "acme", env=_env(db_url))
    assert gone.returncode == 0 and acme.schedules.list() == []


def test_demo_documents_runs_the_use_cases_end_to_end(db_url, sql):
    # A mail server the demo must not use: its mail goes to the one it starts itself.
    env = _env(db_url, CHARTER_MODE="development", CHARTER_SMTP_URL="smtp://127.0.0.1:9")
    done = run_charter("demo", "documents", "--documents", "6", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "active (completed)" in done.stdout
    assert "confirmed (completed)" in done.stdout
    assert "delivered (completed)" in done.stdout
    assert "closed (completed)" in done.stdout  # its statements reached its own receiver
    assert "4 webhooks received" in done.stdout
    # Its own org, and nothing of it left pending for another worker or another org's clock.
    [(org,)] = sql("SELECT DISTINCT org_id FROM charter.documents WHERE org_id LIKE 'demo-%%'")
    assert f"left in the database: org {org} with 24 documents" in done.stdout
    assert sql("SELECT count(*) FROM charter.workflow_instances WHERE org_id = %s "
               "AND status IN ('running', 'paused')", org) == [(0,)]  # fmt: skip
    assert sql("SELECT count(*) FROM charter.instance_waits WHERE org_id = %s", org) == [(0,)]
    assert sql("SELECT count(*) FROM charter.side_effects WHERE org_id = %s "
               "AND status IN ('pending', 'processing', 'failed')", org) == [(0,)]  # fmt: skip
    assert sql("SELECT count(*) FROM charter.test_clock") == [(0,)]
    urls = sql("SELECT DISTINCT request->>'url' FROM charter.side_effects WHERE org_id = %s "
               "AND request ? 'url'", org)  # fmt: skip
    assert urls and all(url.startswith("http://127.0.0.1:") for (url,) in urls)


def test_a_worker_without_a_module_runs_the_documents_engine(acme, db_url):
    worker = subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--poll-interval", "0.05"],
        env=_env(db_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        doc = acme.documents.create(
            "ap_invoice", {"grand_total": 10, "vendor_id": "v-trusted"}, actor="clerk"
        )
        acme.documents.transition(doc.id, "submit", actor="clerk")
        assert acme.documents.wait(doc.id, timeout=30).state == "active"
    finally:
        worker.terminate()
        output, _ = worker.communicate(timeout=30)
    assert worker.returncode == 0, output
    assert "flows none" in output and "the documents engine" in output


def test_approvals_inbox_and_decide(acme, engine, db_url):
    acme.directory.put_user("reviewer", roles=["ap_clerk"])
    data = {"grand_total": 9000, "vendor_id": "v"}
    doc = acme.documents.create("ap_invoice", data, actor="clerk")
    acme.documents.transition(doc.id, "submit", actor="clerk")
    acme.documents.wait(doc.id, timeout=20)
    [request] = acme.approvals.inbox("reviewer")
    shown = run_charter("approvals", "inbox", "reviewer", "--org", "acme", env=_env(db_url))
    assert shown.returncode == 0 and request.id in shown.stdout
    stale = run_charter(
        "approvals", "decide", request.id, "approve", "--actor", "reviewer", "--version", "1",
        "--org", "acme", env=_env(db_url),
    )  # fmt: skip
    assert stale.returncode == 1 and "APPROVAL_VERSION_STALE" in stale.stderr
    done = run_charter(
        "approvals", "decide", request.id, "approve", "--actor", "reviewer", "--version", "2",
        "--comment", "fine", "--org", "acme", env=_env(db_url),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the request is approved" in done.stdout
    assert acme.documents.wait(doc.id, timeout=20).state == "active"


def test_documents_pause_resume_and_restart_and_runs_cancel_name_the_actor(acme, engine, db_url):
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 9000, "vendor_id": "v"}, actor="clerk"
    )
    acme.documents.transition(doc.id, "submit", actor="clerk")
    run_id = acme.documents.wait(doc.id, timeout=20).workflow.run_id
    env = _env(db_url)
    paused = run_charter(
        "documents", "pause", doc.id, "--actor", "boss", "--reason", "dispute", "--org", "acme",
        env=env,
    )  # fmt: skip
    assert paused.returncode == 0, paused.stderr
    assert f"workflow instance {run_id} is paused" in paused.stdout
    refused = run_charter(
        "documents", "restart", doc.id, "--actor", "boss", "--org", "acme", env=env
    )
    assert refused.returncode == 1 and "RUN_STATE_INVALID" in refused.stderr
    resumed = run_charter(
        "documents", "resume", doc.id, "--actor", "boss", "--org", "acme", env=env
    )
    assert f"workflow instance {run_id} is running" in resumed.stdout, resumed.stderr
    cancelled = run_charter(
        "runs", "cancel", run_id, "--org", "acme", "--actor", "boss", "--reason", "typo", env=env
    )
    assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout, cancelled.stderr
    restarted = run_charter(
        "documents", "restart", doc.id, "--actor", "boss", "--org", "acme", env=env
    )
    assert restarted.returncode == 0, restarted.stderr
    assert "is running" in restarted.stdout and run_id not in restarted.stdout
    acts = [(e.action, e.actor, e.reason) for e in acme.documents.history(doc.id)]
    assert [a for a in acts if a[0].startswith("instance.")] == [
        ("instance.pause", "boss", "dispute"),
        ("instance.resume", "boss", None),
        ("instance.cancel", "boss", "typo"),
        ("instance.restart", "boss", None),
    ]
