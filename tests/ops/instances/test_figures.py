"""Figures that mean what they say: p95 step latency leaves out waits (reported by kind on
the health report, /api/health, /metrics, the dashboard and `charter doctor`); dead workers
leave `charter workers` after a grace period and lose nothing; a documents-only worker says
what it applied when it stops; tables are not cut at 80 columns."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

from charter import Flow
from charter.api import create_app
from charter.cli import main
from charter.client.client import Client
from tests import runtime_definitions as defs
from tests.engine import claim, install, start
from tests.integration.helpers import charter_env
from tests.workers import running_worker

# The node types that wait (for a person, a transition, a timer, an event, a receiver).
WAITING_TYPES = ("approval", "lifecycle_state", "wait_timer", "wait_event", "webhook_out",
                 "notification")  # fmt: skip


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _napping_memo(acme, sql) -> str:
    """A memo whose instance runs a few quick nodes and a 2-second timer, then ends (the
    slot's exit is the close gate)."""
    contract = defs.contract("nap_memo", {"code": "string"})
    nodes = [
        ("before", "script", {"expression": "1", "assignTo": "context.before"}),
        ("nap", "wait_timer", {"duration": "PT2S"}),
        ("after", "script", {"expression": "2", "assignTo": "context.after"}),
    ]
    acme.definitions.publish(contract)
    org = defs.org_definition("nap_memo", nodes, [("before", "nap", {}), ("nap", "after", {})])
    acme.definitions.publish(contract, org)
    doc = acme.documents.create("nap_memo", {"code": "N1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    # The body runs, the timer fires two seconds later, and the close gate ends it.
    deadline = time.monotonic() + 30
    while acme.documents.wait(doc.id, timeout=20).workflow.status != "completed":
        assert time.monotonic() < deadline, "the timer never fired"
        time.sleep(0.1)
    return doc.id


def test_p95_step_latency_leaves_out_waits_and_reports_them_by_kind(
    acme, engine, sql, api, keys, db_url, capsys
):
    _napping_memo(acme, sql)
    [(longest_work, nodes_that_worked)] = sql(
        "SELECT max(extract(epoch FROM finished_at - started_at)) * 1000, count(*)"
        " FROM charter.step_executions WHERE org_id = 'acme' AND status = 'completed'"
        " AND started_at IS NOT NULL AND step_slug NOT LIKE '$%%'"
        " AND coalesce(node_type, '') <> ALL (%s)",
        list(WAITING_TYPES),
    )
    assert nodes_that_worked >= 5  # start, slot entry and exit, two scripts, gates, end
    report = acme.health.report()
    # The timer waited at least its 2 seconds; the nodes that worked took what they took.
    waits = report.wait_latency_p95_ms
    assert waits["timer"] >= 2000
    assert set(waits) == {"timer", "transition"}
    assert report.step_latency_p95_ms is not None
    assert report.step_latency_p95_ms <= float(longest_work) < waits["timer"]

    # The same figures on /api/health, /metrics, the dashboard and `charter doctor`.
    ops = {"Authorization": f"Bearer {keys['ops']}"}
    health = api.get("/api/health", headers=ops).json()
    assert health["step_latency_p95_ms"] == pytest.approx(report.step_latency_p95_ms)
    assert health["wait_latency_p95_ms"] == pytest.approx(waits)
    metrics = api.get("/metrics", headers=ops).text
    [p95] = re.findall(r"^charter_step_latency_p95_seconds (\S+)$", metrics, re.M)
    assert float(p95) == pytest.approx(report.step_latency_p95_ms / 1000)
    shown = dict(re.findall(r'^charter_wait_p95_seconds\{kind="(\w+)"\} (\S+)$', metrics, re.M))
    assert {k: float(v) * 1000 for k, v in shown.items()} == pytest.approx(waits)
    # The step histogram holds only nodes that worked.
    histogram_types = set(re.findall(r'charter_step_duration_seconds_count\{.*node_type="(\w+)"',
                                     metrics))  # fmt: skip
    assert histogram_types and not histogram_types & set(WAITING_TYPES)
    token = re.search(r'name="csrf" value="([^"]+)"', api.get("/sign-in").text)
    assert token
    api.post("/sign-in", data={"key": keys["ops"], "csrf": token.group(1), "next": "/"})
    page = api.get("/").text
    assert 'data-wait-kind="timer"' in page and 'data-wait-kind="transition"' in page
    assert main(["--database-url", db_url, "doctor", "--org", "acme", "--json"]) == 0
    raw = json.loads(capsys.readouterr().out)
    assert raw["stepLatencyP95Ms"] == pytest.approx(report.step_latency_p95_ms)
    assert raw["waitLatencyP95Ms"] == pytest.approx(waits)
    assert main(["--database-url", db_url, "doctor", "--org", "acme"]) == 0
    text = capsys.readouterr().out
    assert "p95 step latency (last hour, waits left out):" in text
    assert re.search(r"p95 waits \(last hour\): .*timer \d", text)


def _dying_flow() -> Flow:
    flow = Flow("dying_flow", max_attempts=3, base_delay=0)

    @flow.step
    def only(run: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"ok": True}

    return flow


def test_dead_workers_leave_the_list_after_a_grace_period_and_lose_nothing(
    db_url, capsys, monkeypatch
):
    flow = _dying_flow()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        conn.execute(
            "SELECT charter.register_worker('dead-worker', 'gone.local', 4242, '{dying_flow}', 1,"
            " '{}'::jsonb, 1)"
        )
        run_id = start(conn, "dying_flow", {})
        # The worker claims the task, then dies: it never heartbeats, stops or answers.
        [task] = claim(conn, ["dying_flow"], lease=1, worker="dead-worker")
        assert task.run_id == run_id
        conn.execute(
            "UPDATE charter.workers SET last_heartbeat_at = now() - interval '5 minutes'"
            " WHERE id = 'dead-worker'"
        )
    with Client(db_url) as client:
        # Within the grace period (15 minutes by default) it is listed, dead, with its claim.
        [dead] = [w for w in client.workers() if w.id == "dead-worker"]
        assert not dead.alive and dead.claimed == 1
        # Past it, it leaves the list; --all still shows it.
        assert "dead-worker" not in [w.id for w in client.workers(dead_after_seconds=60)]
        assert "dead-worker" in [
            w.id for w in client.workers(include_stopped=True, dead_after_seconds=60)
        ]
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE charter.workers SET last_heartbeat_at = now() - interval '20 minutes'"
                " WHERE id = 'dead-worker'"
            )
        assert "dead-worker" not in [w.id for w in client.workers()]
        assert main(["--database-url", db_url, "workers", "--json"]) == 0
        assert "dead-worker" not in capsys.readouterr().out
        assert main(["--database-url", db_url, "workers", "--all", "--json"]) == 0
        assert "dead-worker" in capsys.readouterr().out
        monkeypatch.setenv("CHARTER_DEAD_WORKER_SECONDS", "3600")  # an operator's longer grace
        assert main(["--database-url", db_url, "workers", "--json"]) == 0
        assert "dead-worker" in capsys.readouterr().out
        monkeypatch.delenv("CHARTER_DEAD_WORKER_SECONDS")
        with pytest.raises(ValueError, match="dead_after_seconds"):
            client.workers(dead_after_seconds=-1)
        # What it held is not lost: its task returns through the lease and another worker
        # runs it; the evidence keeps the dead worker's attempt.
        with running_worker(db_url, flow, install_flows=False):
            assert client.wait(run_id, timeout=30).status == "completed"
    with psycopg.connect(db_url, autocommit=True) as conn:
        attempts = conn.execute(
            "SELECT worker_id, status FROM charter.step_executions"
            " WHERE run_id = %s AND step_slug = 'only' ORDER BY id",
            (run_id,),
        ).fetchall()
    assert attempts[0] == ("dead-worker", "failed") and attempts[-1][1] == "completed"


def test_a_documents_only_worker_says_what_it_applied_when_it_stops(acme, db_url, sql):
    worker = subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--poll-interval", "0.05"],
        env=charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="development"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _napping_memo(acme, sql)
    finally:
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output
    # The events a worker applied: the workflow's own are written applied, never claimed.
    [(events,)] = sql(
        "SELECT count(*) FROM charter.document_events WHERE org_id = 'acme'"
        " AND status = 'completed' AND worker_id IS NOT NULL"
    )
    [(nodes,)] = sql(
        "SELECT count(*) FROM charter.step_executions WHERE org_id = 'acme'"
        " AND step_slug NOT LIKE '$%%' AND status <> 'running'"
    )
    stopped = re.search(r"stopped: documents engine: applied (\d+) events, (\d+) nodes", output)
    assert stopped, output[-3000:]
    assert (int(stopped.group(1)), int(stopped.group(2))) == (events, nodes)
    assert events >= 2 and nodes >= 5
    assert "0 completed" not in output  # no flows: no flow figures to report


def test_documents_engine_counts_in_the_runner_api(acme, db_url, sql):
    with running_worker(db_url) as worker:
        _napping_memo(acme, sql)
    counts = worker.documents.counts if worker.documents else None
    # The memo's create and the user's change; the workflow's own events are written applied.
    assert counts is not None and counts.applied >= 2 and counts.nodes >= 5
    assert counts.resumed >= 1  # the timer
    assert worker.stop_summary().startswith(
        f"documents engine: applied {counts.applied} events, {counts.nodes} nodes, "
        f"{counts.resumed} waits resumed"
    )


LONG_ID = "run-with-an-identifier-far-longer-than-eighty-columns-" + "x" * 40


def _cli_runs(db_url: str, *args: str, columns: str | None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "charter", "runs", "list", *args],
        env=charter_env(CHARTER_DATABASE_URL=db_url, COLUMNS=columns),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_tables_are_not_cut_at_eighty_columns(db_url, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    flow = _dying_flow()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        start(conn, "dying_flow", {}, run_id=LONG_ID)
    # Piped, with no $COLUMNS: every cell whole.
    piped = _cli_runs(db_url, columns=None)
    assert LONG_ID in piped
    # $COLUMNS is the terminal's width: the table keeps to it…
    narrow = _cli_runs(db_url, columns="60")
    assert LONG_ID not in narrow
    assert max(len(line) for line in narrow.splitlines()) <= 60
    wide = _cli_runs(db_url, columns="200")
    assert LONG_ID in wide
    # …unless --wide asks for every cell whole.
    assert LONG_ID in _cli_runs(db_url, "--wide", columns="60")
