"""documents.wait(until=): "settled" (the default) waits through timers and delivery
retries, which nothing outside has to do anything for; "idle" returns while they are still
to come; a state name waits for the document to be in that state."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from charter import AsyncClient
from charter.errors import ArgumentError, DocumentWaitTimeoutError
from tests import runtime_definitions as defs
from tests.servers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _publish(client: Any, entity_type: str, nodes: list[Any], edges: list[Any]) -> None:
    contract = defs.contract(entity_type, {"code": "string"})
    client.definitions.publish(contract)
    client.definitions.publish(contract, defs.org_definition(entity_type, nodes, edges))


def _open(client: Any, entity_type: str, code: str) -> Any:
    doc = client.documents.create(entity_type, {"code": code}, actor="sales")
    client.documents.transition(doc.id, "open", actor="sales")
    return doc


def _with_timer(client: Any, seconds: int) -> None:
    _publish(
        client,
        "reminder",
        [("pause", "wait_timer", {"duration": f"PT{seconds}S"}),
         ("after", "script", {"expression": "true", "assignTo": "context.after"})],
        [("pause", "after", {})],
    )  # fmt: skip


def test_the_default_waits_through_a_short_timer(acme, engine):
    _with_timer(acme, 3)
    doc = _open(acme, "reminder", "T1")
    idle = acme.documents.wait(doc.id, timeout=30, until="idle")
    assert idle.state == "open" and [w.kind for w in idle.workflow.waiting_for] == ["timer"]
    assert not idle.workflow.settled
    settled = acme.documents.wait(doc.id, timeout=30)
    assert settled.state == "done" and settled.workflow.context["after"] is True
    assert settled.workflow.status == "completed" and settled.workflow.settled


def test_the_default_waits_through_a_delivery_retry(acme, engine, receiver):
    _publish(
        acme,
        "notice",
        [("send", "webhook_out", {"url": receiver.url + "/hooks/{entity.code}"}),
         ("sent", "script", {"expression": "true", "assignTo": "context.sent"})],
        [("send", "sent", {})],
    )  # fmt: skip
    receiver.script["/hooks/W1"] = [(503, {}), (200, {})]  # fails once, then succeeds
    doc = _open(acme, "notice", "W1")
    done = acme.documents.wait(doc.id, timeout=30)
    assert done.state == "done" and done.workflow.context["sent"] is True
    attempts = receiver.to("/hooks/W1")
    assert len(attempts) == 2
    assert attempts[0]["headers"]["Idempotency-Key"] == attempts[1]["headers"]["Idempotency-Key"]


def test_settled_returns_while_the_workflow_waits_for_a_person(acme, engine):
    _publish(
        acme,
        "request",
        [("ok", "approval", {"mode": "inline", "approvers": [{"user": "boss"}]})],
        [],
    )
    doc = _open(acme, "request", "P1")
    waiting = acme.documents.wait(doc.id, timeout=30)
    assert waiting.state == "open" and waiting.workflow.settled
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]


def test_a_state_name_waits_for_that_state(acme, engine, db_url):
    _with_timer(acme, 2)
    doc = _open(acme, "reminder", "S1")
    assert acme.documents.wait(doc.id, timeout=30, until="open").state == "open"
    done = acme.documents.wait(doc.id, timeout=30, until="done")
    assert done.state == "done" and done.workflow.context["after"] is True

    async def wait_async() -> Any:
        async with AsyncClient(db_url, org_id="acme") as client:
            return await client.documents.wait(doc.id, timeout=30, until="done")

    assert asyncio.run(wait_async()).state == "done"


def test_a_state_the_contract_does_not_have_is_refused_naming_its_states(acme, engine):
    _with_timer(acme, 2)
    doc = _open(acme, "reminder", "S2")
    with pytest.raises(ArgumentError) as refused:
        acme.documents.wait(doc.id, timeout=5, until="closed")
    assert "'closed'" in str(refused.value) and "draft, open, done" in str(refused.value)
    for bad in ("", None, 3):
        with pytest.raises(ArgumentError, match="until must be"):
            acme.documents.wait(doc.id, timeout=5, until=bad)


def test_a_timer_longer_than_the_timeout_is_named_when_settled_gives_up(acme, engine):
    _with_timer(acme, 3600)
    doc = _open(acme, "reminder", "L1")
    with pytest.raises(DocumentWaitTimeoutError, match="until='idle'") as gave_up:
        acme.documents.wait(doc.id, timeout=1)
    assert "timer" in str(gave_up.value)
    assert acme.documents.wait(doc.id, timeout=30, until="idle").state == "open"
