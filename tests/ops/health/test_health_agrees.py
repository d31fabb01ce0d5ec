"""The health report, the health page, ``/metrics`` and ``charter doctor`` agree on a
database holding 100 documents waiting for people, 3 truly stuck instances and 2 dead
letters: 3 stuck, 100 waiting, 2 dead letters. Force-fail is offered for the stuck ones
only, and doctor exits 1 for them and the dead letters, 0 once only waiting is left."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from charter.cli import main
from tests.api.test_dashboard import _csrf, _sign_in
from tests.ops.health.test_stuck_and_waiting import _opened, _overdue, _publish, _round
from tests.workers import running_worker


@pytest.fixture
def site(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert match, name
    return float(match.group(1))


def test_report_page_metrics_and_doctor_agree(acme, db_url, sql, site, keys, capsys):
    # Two webhooks out of attempts: dead letters (a real worker tries them once).
    with running_worker(db_url, poll_interval=0.05):
        for n in range(2):
            acme.side_effects.webhook(f"http://127.0.0.1:9/gone/{n}", {}, max_attempts=1)
        deadline = time.monotonic() + 20
        while len(acme.dead_letters.list()) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    # 100 documents waiting for people: 70 at draft (someone moves them on), 30 approvals.
    drafts = _publish(acme, "timer")
    for n in range(70):
        acme.documents.create(drafts, {"code": f"D{n}"}, actor="sales")
    approvals = _publish(acme, "approval")
    for n in range(30):
        doc = acme.documents.create(approvals, {"code": f"A{n}"}, actor="sales")
        acme.documents.transition(doc.id, "open", actor="sales")
    _round(db_url, times=4)
    # 3 truly stuck: an approval nobody may decide (delegated to its own requester), a
    # timer nobody fired, an event nobody applied.
    undecidable = acme.documents.create(approvals, {"code": "U1"}, actor="sales")
    acme.documents.transition(undecidable.id, "open", actor="sales")
    event = _opened(acme, db_url, "event", "E1")
    timer = _opened(acme, db_url, "timer", "T1").workflow.run_id
    sql("UPDATE charter.approval_requests SET approvers = ARRAY['sales'] WHERE document_id = %s",
        undecidable.id)  # fmt: skip
    _overdue(sql, timer)
    acme.documents.update(event.id, {"code": "E2"}, actor="sales")
    sql("UPDATE charter.document_events SET created_at = created_at - interval '20 minutes'"
        " WHERE document_id = %s AND status = 'pending'", event.id)  # fmt: skip
    # Everything has rested half an hour (today's detector called every one of them stuck).
    sql("UPDATE charter.workflow_instances SET updated_at = updated_at - interval '30 minutes'"
        " WHERE org_id = 'acme'")  # fmt: skip
    stuck_runs = {timer, event.workflow.run_id, acme.documents.get(undecidable.id).workflow.run_id}

    report = acme.health.report()
    assert {s.run_id for s in report.stuck} == stuck_runs
    assert {s.reason for s in report.stuck} == {
        "timer_overdue", "event_not_applied", "approval_undecidable"
    }  # fmt: skip
    assert report.waiting == {"instances": 100, "byKind": {"transition": 70, "approval": 30}}
    assert report.dead_letters == 2

    ops = {"Authorization": f"Bearer {keys['ops']}"}
    health = site.get("/api/health", headers=ops).json()
    assert len(health["stuck"]) == 3 and health["dead_letters"] == 2
    assert health["waiting"] == {"instances": 100, "by_kind": {"transition": 70, "approval": 30}}
    assert {s["reason"] for s in health["stuck"]} == {s.reason for s in report.stuck}
    waiting = site.get("/api/health/waiting", headers=ops).json()
    assert {kind: len(items) for kind, items in waiting.items()} == {
        "transition": 70, "approval": 30
    }  # fmt: skip

    metrics = site.get("/metrics", headers=ops).text
    assert _metric(metrics, "charter_stuck_instances") == 3
    assert _metric(metrics, "charter_waiting_instances_all") == 100
    assert _metric(metrics, 'charter_waiting_instances{kind="transition"}') == 70
    assert _metric(metrics, 'charter_waiting_instances{kind="approval"}') == 30
    assert _metric(metrics, 'charter_stuck_by_reason{reason="timer_overdue"}') == 1
    assert _metric(metrics, "charter_dead_letters") == 2

    _sign_in(site, keys["ops"])
    page = site.get("/").text
    shown = dict(re.findall(r'<b id="([\w-]+)">([^<]*)</b>', page))
    assert (shown["stuck-count"], shown["waiting-count"], shown["dead-letters"]) == (
        "3", "100", "2"
    )  # fmt: skip
    assert page.count('value="force-fail"') == 3  # on the stuck entries only
    assert set(re.findall(r'<form method="post" action="/stuck/([^"]+)"', page)) == stuck_runs

    assert main(["--database-url", db_url, "doctor", "--org", "acme"]) == 1
    said = capsys.readouterr().out
    assert "3 stuck" in said and "100 waiting" in said and "2 dead letters" in said
    for reason in ("timer_overdue", "event_not_applied", "approval_undecidable"):
        assert reason in said

    # Only real trouble makes doctor fail: the stuck ones force-failed from the page, the dead
    # letters dropped, 100 waiting is healthy.
    for run_id in stuck_runs:
        answer = site.post(f"/stuck/{run_id}", data={"action": "force-fail", "reason": "ops",
                                                     "csrf": _csrf(page)})  # fmt: skip
        assert answer.status_code == 303
    acme.dead_letters.drop([letter.id for letter in acme.dead_letters.list()])
    _round(db_url)  # the engine runs again: the event it had not applied is applied
    assert main(["--database-url", db_url, "doctor", "--org", "acme"]) == 0
    said = capsys.readouterr().out
    assert "0 stuck" in said and "100 waiting" in said and "0 dead letters" in said
