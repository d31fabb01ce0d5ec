"""Stuck means stuck: the detector finds what should be moving and is not, each with why
(a task not claimed or past its lease, a node not run, an event not applied, a timer or a
timeout not fired, a delivery past its retry time, an approval nobody may decide, nothing
pending at all), and never an instance waiting for a person, an event or a timer not yet
due: those are reported apart, as waiting, by what they wait for. The engine is driven by
hand (no worker), so nothing moves unless the test moves it."""

from __future__ import annotations

import psycopg
import pytest

from tests import runtime_definitions as defs
from tests.engine import install
from tests.flows_for_tests import analyze_site

VERIFIED = "(SELECT array_agg(id) FROM charter.workflow_versions)"
CLAIM_TASKS = "SELECT charter.claim_action_tasks('w-gone', ARRAY['ops.fee'], 10, 30)"

NODES = {
    "timer": [("nap", "wait_timer", {"duration": "PT1H"})],
    "event": [("hold", "wait_event", {"eventKey": "ops:{entity.code}"})],
    "timeout": [("hold", "wait_event", {"eventKey": "ops:{entity.code}", "timeout": "PT5H"})],
    "approval": [("ok", "approval", {"mode": "inline", "approvers": [{"user": "boss"}]})],
    "escalating": [
        (
            "ok",
            "approval",
            {"mode": "inline", "approvers": [{"user": "boss"}], "escalateAfter": "PT48H"},
        )
    ],
    "all": [
        (
            "ok",
            "approval",
            {"mode": "inline", "approvers": [{"role": "warehouse"}], "decision": "all"},
        )
    ],
    "delivery": [
        (
            "send",
            "webhook_out",
            {
                "url": "http://127.0.0.1:9/hooks/{entity.code}",
                "payloadTemplate": {"c": "entity.code"},
            },
        ),
    ],
    "task": [
        (
            "fee",
            "action",
            {"actionType": "ops.fee", "runAs": "system", "payloadTemplate": {"rate": "0.05"}},
        ),
    ],
}


def _round(db_url: str, times: int = 3) -> None:
    """What the documents engine does, by hand: apply the events, fire the due waits."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        for _ in range(times):
            conn.execute(
                "SELECT charter.apply_document_events(coalesce(jsonb_agg(to_jsonb(c)), '[]'), "
                f"{VERIFIED}) FROM charter.claim_document_events('engine', 100, 30) AS c"
            )
            conn.execute(f"SELECT charter.fire_due_waits(100, {VERIFIED})")


def _publish(client, kind: str) -> str:
    entity_type = f"ops_{kind}"
    contract = defs.contract(entity_type, {"code": "string"})
    client.definitions.publish(contract)
    client.definitions.publish(contract, defs.org_definition(entity_type, NODES[kind], []))
    return entity_type


def _opened(client, db_url, kind: str, code: str = "C1"):
    """A document of its own type, opened: its instance waits at the slot's node."""
    doc = client.documents.create(_publish(client, kind), {"code": code}, actor="sales")
    client.documents.transition(doc.id, "open", actor="sales")
    _round(db_url)
    return client.documents.get(doc.id)


def _age(sql, run_id: str, minutes: int) -> None:
    """As if the instance got where it is ``minutes`` ago (its waits' deadlines unmoved)."""
    ago = f"interval '{minutes} minutes'"
    sql(f"UPDATE charter.workflow_instances SET updated_at = updated_at - {ago} WHERE id = %s",
        run_id)  # fmt: skip
    sql(f"UPDATE charter.instance_waits SET created_at = created_at - {ago} WHERE run_id = %s",
        run_id)  # fmt: skip
    sql(f"UPDATE charter.step_states SET ready_at = ready_at - {ago} WHERE run_id = %s", run_id)


def _overdue(sql, run_id: str) -> None:
    """Its waits were due 20 minutes ago, and nothing fired them."""
    sql("UPDATE charter.instance_waits SET due_at = now() - interval '20 minutes'"
        " WHERE run_id = %s", run_id)  # fmt: skip


def test_nothing_waiting_for_a_person_an_event_or_a_timer_is_stuck(acme, db_url, sql):
    acme.directory.put_user("w2", roles=["warehouse"])
    docs = acme.documents
    timer = _opened(acme, db_url, "timer")  # due in an hour
    draft = docs.create("ops_timer", {"code": "D1"}, actor="sales")
    paused = docs.create("ops_timer", {"code": "P1"}, actor="sales")
    _round(db_url)
    docs.pause(paused.id, actor="boss", reason="vendor dispute")
    waiting = {
        "transition": docs.get(draft.id),  # at draft: a person moves it on
        "timer": timer,
        "event": _opened(acme, db_url, "event"),  # no timeout
        "event+timeout": _opened(acme, db_url, "timeout"),  # its timeout 5 hours ahead
        "approval": _opened(acme, db_url, "approval"),
        "approval+escalation": _opened(acme, db_url, "escalating"),  # escalates in 48 hours
        "approval (all)": _opened(acme, db_url, "all"),  # wh and w2 may both decide
        "delivery": _opened(acme, db_url, "delivery"),
        "task": _opened(acme, db_url, "task"),  # queued for a worker with the action
        "operator": docs.get(paused.id),
    }
    delivery = waiting["delivery"].workflow.run_id
    # The webhook failed once and backs off: its next try is in an hour.
    sql("UPDATE charter.side_effects SET attempts = 1,"
        " next_retry_at = now() + interval '1 hour' WHERE run_id = %s", delivery)  # fmt: skip
    for doc in waiting.values():
        _age(sql, doc.workflow.run_id, 120)

    assert acme.health.stuck(minutes=10) == []
    report = acme.health.report()
    assert report.stuck == [] and report.waiting["instances"] == len(waiting)
    expected = {
        "transition": 1, "timer": 1, "event": 2, "approval": 3, "delivery": 1, "task": 1,
        "operator": 1,
    }  # fmt: skip
    assert report.waiting["byKind"] == expected
    grouped = acme.health.waiting_longer_than(hours=1)
    assert {kind: len(items) for kind, items in grouped.items()} == expected
    by_run = {w.run_id: w for items in grouped.values() for w in items}
    for name, doc in waiting.items():
        wait = by_run[doc.workflow.run_id]
        assert wait.kind == name.split(" ")[0].split("+")[0], name
        assert wait.document_id == doc.id and wait.waiting_seconds >= 7000
    assert by_run[waiting["transition"].workflow.run_id].detail == {"state": "draft"}
    assert acme.health.waiting_longer_than(hours=3) == {}  # none waited that long


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("timer", "timer_overdue"),
        ("escalating", "timer_overdue"),  # an escalation due and not fired
        ("timeout", "timeout_overdue"),
        ("task", "task_overdue"),  # never claimed: no worker has the action
        ("task-leased", "task_overdue"),  # claimed, and its lease ran out long ago
        ("delivery", "delivery_overdue"),
        ("event-unapplied", "event_not_applied"),
        ("approval-left", "approval_undecidable"),  # its only approver left the directory
        ("approval-delegated", "approval_undecidable"),  # delegated to its requester
        ("approval-all", "approval_undecidable"),  # decision all: one approver left
        ("node-ready", "node_not_run"),
        ("nothing", "nothing_pending"),
    ],
)
def test_each_kind_of_stuck_is_found_with_why(acme, db_url, sql, kind, reason):
    acme.directory.put_user("w2", roles=["warehouse"])
    base = {
        "task-leased": "task",
        "event-unapplied": "event",
        "approval-left": "approval",
        "approval-delegated": "approval",
        "approval-all": "all",
        "node-ready": "event",
        "nothing": "event",
    }.get(kind, kind)
    doc = _opened(acme, db_url, base)
    run_id = doc.workflow.run_id
    _age(sql, run_id, 30)
    if kind in ("timer", "escalating", "timeout", "task"):
        _overdue(sql, run_id)
    elif kind == "task-leased":
        assert len(sql(CLAIM_TASKS)) == 1  # a worker took it, then vanished
        _overdue(sql, run_id)
    elif kind == "delivery":
        sql("UPDATE charter.side_effects SET next_retry_at = now() - interval '20 minutes'"
            " WHERE run_id = %s", run_id)  # fmt: skip
    elif kind == "event-unapplied":
        acme.documents.update(doc.id, {"code": "C2"}, actor="sales")  # an event nobody applies
        sql("UPDATE charter.document_events SET created_at = created_at - interval '20 minutes'"
            " WHERE document_id = %s AND status = 'pending'", doc.id)  # fmt: skip
    elif kind == "approval-left":
        assert acme.directory.remove_user("boss") is True
    elif kind == "approval-delegated":
        # A delegation that reached the request's own requester (made before that was refused).
        sql("UPDATE charter.approval_requests SET approvers = ARRAY['sales'],"
            " delegated = '{\"boss\": \"sales\"}' WHERE run_id = %s", run_id)  # fmt: skip
    elif kind == "approval-all":
        assert acme.directory.remove_user("w2") is True
    elif kind == "node-ready":
        # As if its event were applied but the engine never ran on: the next node is ready.
        sql("DELETE FROM charter.instance_waits WHERE run_id = %s", run_id)
        sql("UPDATE charter.step_states SET status = 'ready' WHERE run_id = %s"
            " AND step_slug = 'usr:slot:work:hold'", run_id)  # fmt: skip
    elif kind == "nothing":
        # Not at an end and nothing pending: no wait, no node active, not at a state.
        sql("DELETE FROM charter.instance_waits WHERE run_id = %s", run_id)
        sql("UPDATE charter.step_states SET status = 'completed' WHERE run_id = %s"
            " AND status IN ('ready', 'running')", run_id)  # fmt: skip

    [stuck] = acme.health.stuck(minutes=10)
    assert (stuck.run_id, stuck.document_id, stuck.kind) == (run_id, doc.id, "instance")
    assert stuck.reason == reason and stuck.reasons[0]["reason"] == reason
    if kind == "task":
        assert stuck.reasons[0]["detail"]["claimed"] is False
    if kind == "task-leased":
        assert stuck.reasons[0]["detail"]["claimed"] is True
    if kind.startswith("approval"):
        unable = stuck.reasons[0]["detail"]["unable"]
        assert (
            unable
            == {
                "approval-left": {"boss": "not in the directory"},
                "approval-delegated": {"sales": "requester"},
                "approval-all": {"w2": "not in the directory"},
            }[kind]
        )
    else:
        # With a threshold it has not passed yet, it is not stuck (an approval nobody may
        # decide is stuck at once).
        assert acme.health.stuck(minutes=60) == []
    report = acme.health.report()
    assert [s.run_id for s in report.stuck] == [run_id]
    assert run_id not in {
        w.run_id for items in acme.health.waiting_longer_than().values() for w in items
    }


def test_a_flow_task_not_claimed_or_past_its_lease_is_stuck(acme, db_url, sql, login, keys):
    with psycopg.connect(db_url, autocommit=True) as owner:
        install(owner, analyze_site())
    queued = acme.start("analyze_site", {"pages": ["a"]})
    leased = acme.start("analyze_site", {"pages": ["b"]})
    assert acme.health.stuck(minutes=10) == []  # ready just now: no worker needed yet
    sql("UPDATE charter.tasks SET available_at = now() - interval '20 minutes'"
        " WHERE run_id = %s", queued)  # fmt: skip
    sql("UPDATE charter.tasks SET status = 'started', worker_id = 'w-gone',"
        " delivery_token = gen_random_uuid(), available_at = now() - interval '20 minutes'"
        " WHERE run_id = %s", leased)  # fmt: skip
    found = {s.run_id: s for s in acme.health.stuck(minutes=10)}
    assert set(found) == {queued, leased}
    for run_id, claimed in ((queued, False), (leased, True)):
        stuck = found[run_id]
        assert (stuck.kind, stuck.reason, stuck.document_id) == ("flow", "task_overdue", None)
        assert stuck.reasons[0]["detail"]["claimed"] is claimed
        assert stuck.reasons[0]["detail"]["flow"] == "analyze_site"
    assert acme.health.stuck(minutes=30) == []
    # The health page shows them, with the way to their run page and no instance's buttons.
    from starlette.testclient import TestClient

    from charter.api import create_app
    from tests.api.test_dashboard import _sign_in

    with TestClient(create_app(login("charter_app")), follow_redirects=False) as site:
        _sign_in(site, keys["ops"])
        page = site.get("/").text
    for run_id in (queued, leased):
        assert f'data-run="{run_id}" data-reason="task_overdue"' in page
        assert f'action="/stuck/{run_id}"' not in page
    assert 'value="force-fail"' not in page
