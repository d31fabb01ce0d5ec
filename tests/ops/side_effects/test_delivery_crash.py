"""Exactly once, honestly: a `charter worker` SIGKILLed after the receiver got a webhook but
before charter recorded the success. The next worker sends it again with the same
idempotency key, a receiver that honours the key applies it once, and charter records one
success — the node completes once and the workflow goes on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests import runtime_definitions as defs
from tests.integration.helpers import charter_env
from tests.servers import Receiver


def _worker(db_url: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--lease-seconds", "2", "--poll-interval",
         "0.05"],
        env=charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="production"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def test_a_worker_killed_after_sending_is_followed_by_one_success(acme, db_url, receiver, sql):
    contract = defs.contract("payout", {"ref": "string"})
    nodes = [
        ("pay", "webhook_out", {"url": receiver.url + "/payouts",
                                "payloadTemplate": {"ref": "entity.ref"}}),
        ("paid", "script", {"expression": "true", "assignTo": "context.paid"}),
    ]  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("payout", nodes, [("pay", "paid", {})]))

    applied: dict[str, Any] = {}  # the receiver's own dedup: by Idempotency-Key
    first = _worker(db_url)

    def kill_the_sender_once(request: dict[str, Any]) -> None:
        key = request["headers"]["Idempotency-Key"]
        applied.setdefault(key, json.loads(request["body"]))
        if first.poll() is None:  # the request arrived: now the worker dies before the 200
            first.send_signal(signal.SIGKILL)
            first.wait()

    receiver.hook = kill_the_sender_once
    doc = acme.documents.create("payout", {"ref": "P-1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    deadline = time.monotonic() + 30
    while first.poll() is None:
        assert time.monotonic() < deadline, "the webhook never arrived"
        time.sleep(0.05)
    [(status, attempts)] = sql("SELECT status, attempts FROM charter.side_effects")
    assert (status, attempts) == ("processing", 1)  # sent, but no success recorded

    second = _worker(db_url)
    try:
        done = acme.documents.wait(doc.id, timeout=30)
        while done.state != "done":
            assert time.monotonic() < deadline + 30
            time.sleep(0.1)
            done = acme.documents.wait(doc.id, timeout=30)
    finally:
        second.terminate()
        second.wait(30)

    sent = receiver.to("/payouts")
    assert len(sent) == 2  # at least once on the wire …
    assert len({r["headers"]["Idempotency-Key"] for r in sent}) == 1
    assert [r["headers"]["X-Charter-Attempt"] for r in sent] == ["1", "2"]
    assert applied == {sent[0]["headers"]["Idempotency-Key"]: {"ref": "P-1"}}  # … once applied
    [(status, attempts, key)] = sql(
        "SELECT status, attempts, idempotency_key FROM charter.side_effects"
    )
    assert (status, attempts, key) == ("completed", 2, sent[0]["headers"]["Idempotency-Key"])
    assert done.workflow.context["paid"] is True
    [(completions,)] = sql(
        "SELECT count(*) FROM charter.step_executions WHERE run_id = %s"
        " AND step_slug = 'usr:slot:work:pay' AND status = 'completed'",
        done.workflow.run_id,
    )
    assert completions == 1  # charter recorded one success
