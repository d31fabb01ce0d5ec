"""Events and amendments: an event sent for the original — named by its document, kept from
before the amendment existed, or naming no document at all — never resumes the amendment,
which waits on the same key (its data, and so its rendered key, are the original's): an
amendment takes only events that name it."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from charter.errors import DocumentNotFoundError
from tests.workers import running_worker


def _bill_contract():
    return {
        "entityType": "bill",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "approved", "editWindow": "locked"},
            {"id": "posted", "editWindow": "locked"},
            {"id": "paid", "editWindow": "locked", "final": True},
        ],
        "transitions": [
            {"from": "draft", "to": "approved", "gate": "approve"},
            {"from": "approved", "to": "posted", "gate": "post"},
            {"from": "posted", "to": "paid", "gate": "settle"},
        ],
        "slots": [
            {
                "slotId": "slot:payment",
                "entryNodeId": "sys:state:posted",
                "exitNodeId": "sys:gate:settle",
                "defaultEditWindow": "locked",
                "stableRegion": False,
            }
        ],
        "fields": {"bill_no": "string", "amount": "number"},
        "policies": {"*": {"rule": "true"}},
    }


def _bill_org():
    return {
        "baseRef": {"entityType": "bill", "envelopeVersion": 1},
        "slots": {
            "slot:payment": {
                "nodes": [
                    {
                        "id": "usr:slot:payment:paid",
                        "type": "wait_event",
                        "config": {"eventKey": "payment:{entity.bill_no}"},
                    }
                ],
                "edges": [],
            }
        },
    }


def _unconsumed(sql, *event_ids):
    rows = sql(
        "SELECT event_id FROM charter.inbound_events WHERE event_id = ANY (%s) "
        "AND consumed_at IS NULL ORDER BY event_id",
        list(event_ids),
    )
    return [row[0] for row in rows]


def test_an_event_for_the_original_never_resumes_its_amendment(acme, engine, sql):
    acme.definitions.publish(_bill_contract())
    acme.definitions.publish(_bill_contract(), _bill_org())
    docs, events = acme.documents, acme.events
    original = docs.create("bill", {"bill_no": "B-1", "amount": 100}, actor="clerk")
    docs.transition(original.id, "approve", actor="clerk")
    # Sent for the original before any amendment, while nothing waits: kept.
    assert events.send("payment:B-1", {"paid": 100}, event_id="early").status == "kept"

    amendment = docs.amend(original.id, {"amount": 90}, actor="clerk", reason="discount")
    # Named for the original after the amendment: kept for it, never the amendment's.
    for_original = events.send(
        "payment:B-1", {"paid": 100}, event_id="for-original", document_id=original.id
    )
    assert (for_original.status, for_original.matched) == ("kept", 0)

    docs.transition(amendment.id, "approve", actor="clerk")
    docs.transition(amendment.id, "post", actor="clerk")
    waiting = docs.wait(amendment.id, timeout=60)
    assert waiting.state == "posted"  # neither kept event resumed it
    [wait] = waiting.workflow.waiting_for
    assert (wait.kind, wait.detail["eventKey"]) == ("event", "payment:B-1")
    # Named for the original while the amendment waits on the key: still not its.
    again = events.send("payment:B-1", {"paid": 100}, event_id="again", document_id=original.id)
    assert (again.status, again.matched) == ("kept", 0)
    assert docs.wait(amendment.id, timeout=60).state == "posted"
    # Naming no document while the amendment waits: its keys are its original's, so an
    # amendment takes only events that name it.
    unnamed = events.send("payment:B-1", {"paid": 100}, event_id="unnamed")
    assert (unnamed.status, unnamed.matched) == ("kept", 0)
    assert docs.wait(amendment.id, timeout=60).state == "posted"
    assert _unconsumed(sql, "early", "for-original", "again", "unnamed") == [
        "again", "early", "for-original", "unnamed"
    ]  # fmt: skip

    # The amendment's own payment resumes it.
    paid = events.send("payment:B-1", {"paid": 90}, event_id="paid", document_id=amendment.id)
    assert (paid.status, paid.matched) == ("delivered", 1)
    done = docs.wait(amendment.id, timeout=60)
    assert done.state == "paid" and done.workflow.context["event"] == {"paid": 90}
    assert docs.get(original.id).state == "approved"  # frozen: no state amended declared

    with pytest.raises(DocumentNotFoundError, match="names document 'nope'"):
        events.send("payment:B-1", {}, document_id="nope")


def test_an_event_kept_for_a_document_waits_for_that_document(acme, engine):
    acme.definitions.publish(_bill_contract())
    acme.definitions.publish(_bill_contract(), _bill_org())
    docs, events = acme.documents, acme.events
    first = docs.create("bill", {"bill_no": "B-2", "amount": 1}, actor="clerk")
    second = docs.create("bill", {"bill_no": "B-2", "amount": 2}, actor="clerk")
    kept = events.send("payment:B-2", {"paid": 2}, event_id="p-2", document_id=second.id)
    assert kept.status == "kept"
    for doc in (first, second):
        docs.transition(doc.id, "approve", actor="clerk")
        docs.transition(doc.id, "post", actor="clerk")
    assert docs.wait(first.id, timeout=60).state == "posted"  # not its event
    assert docs.wait(second.id, timeout=60).state == "paid"  # its own, kept for it


def test_a_document_amended_before_its_instance_began_never_gets_one(acme, db_url, sql):
    acme.definitions.publish(_bill_contract())
    acme.definitions.publish(_bill_contract(), _bill_org())
    docs = acme.documents
    original = docs.create("bill", {"bill_no": "B-3", "amount": 1}, actor="clerk")
    docs.transition(original.id, "approve", actor="clerk")
    amendment = docs.amend(original.id, {"amount": 2}, actor="clerk")  # no engine ran yet
    with running_worker(db_url, poll_interval=0.05):
        started = docs.wait(amendment.id, timeout=60)
        assert started.workflow.current_nodes == ["sys:state:draft"]
        deadline = time.monotonic() + 60
        while sql(
            "SELECT count(*) FROM charter.document_events WHERE document_id = %s "
            "AND status <> 'completed'",
            original.id,
        ) != [(0,)]:
            assert time.monotonic() < deadline, "the engine never applied the original's events"
            time.sleep(0.05)
    # Its on_create was applied after the amendment: superseded, it never began.
    assert docs.get(original.id).workflow.run_id is None


def test_a_schedule_passing_a_gate_leaves_amended_documents_alone(acme, db_url, sql):
    acme.definitions.publish(_bill_contract())
    docs = acme.documents
    bills = [docs.create("bill", {"bill_no": f"B-{n}", "amount": n}, actor="clerk") for n in (4, 5)]
    for bill in bills:
        docs.transition(bill.id, "approve", actor="clerk")
    amendment = docs.amend(bills[0].id, {"amount": 3}, actor="clerk")  # frozen at approved
    acme.schedules.put("posting", "0 * * * *", entity_type="bill", action="post")
    acme.test_clock.advance(timedelta(hours=2))
    try:
        assert sql("SELECT charter.fire_due_schedules(10)") == [(1,)]
    finally:
        acme.test_clock.reset()
    [schedule] = [s for s in acme.schedules.list() if s.name == "posting"]
    assert "error" not in schedule.last_result, schedule.last_result
    assert schedule.last_result["documents"] == 1
    assert [docs.get(b.id).state for b in bills] == ["approved", "posted"]
    assert docs.get(amendment.id).state == "draft"
