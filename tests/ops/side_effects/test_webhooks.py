"""Webhooks delivered to a real local HTTP receiver: signed, with one idempotency key per
effect on every attempt, retried on 5xx and 429 (after Retry-After), dead-lettered on other
4xx — then the node's `failed` edge, or the instance fails with DELIVERY_FAILED."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from charter.worker.channels.webhook import SIGNATURE_HEADER, signature
from tests import runtime_definitions as defs
from tests.servers import Receiver
from tests.workers import running_worker


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _publish(client, url, *, failed_edge):
    contract = defs.contract("notice", {"code": "string"})
    nodes = [
        ("send", "webhook_out", {"url": url + "/hooks/{entity.code}",
                                 "payloadTemplate": {"code": "entity.code", "kind": "'notice'"},
                                 "headers": {"X-Tenant": "{entity.code}"}}),
        ("sent", "script", {"expression": "true", "assignTo": "context.sent"}),
    ]  # fmt: skip
    edges = [("send", "sent", {})]
    if failed_edge:
        nodes.append(("fallback", "script", {"expression": "true", "assignTo": "context.fallback"}))
        edges.append(("send", "fallback", {"label": "failed"}))
    client.definitions.publish(contract)
    client.definitions.publish(contract, defs.org_definition("notice", nodes, edges))


def _open(client, code):
    doc = client.documents.create("notice", {"code": code}, actor="sales")
    client.documents.transition(doc.id, "open", actor="sales")
    return doc


def test_a_webhook_is_signed_keyed_and_delivered(acme, engine, receiver, sql):
    _publish(acme, receiver.url, failed_edge=True)
    doc = _open(acme, "A1")
    done = acme.documents.wait(doc.id, timeout=20)
    assert done.state == "done" and done.workflow.context["sent"] is True
    [request] = receiver.to("/hooks/A1")
    assert json.loads(request["body"]) == {"code": "A1", "kind": "notice"}
    secret = acme.side_effects.webhook_secret()
    assert request["headers"][SIGNATURE_HEADER] == signature(secret, request["body"])
    [(key, status, response)] = sql(
        "SELECT idempotency_key, status, response FROM charter.side_effects WHERE run_id = %s",
        done.workflow.run_id,
    )
    assert request["headers"]["Idempotency-Key"] == key and status == "completed"
    assert request["headers"]["X-Tenant"] == "A1"
    assert response["status"] == 200
    step = acme.get_run(done.workflow.run_id).step("usr:slot:work:send")
    assert step.output["delivery"]["response"]["status"] == 200


def test_5xx_and_429_are_retried_with_the_same_key_and_retry_after(acme, engine, receiver):
    _publish(acme, receiver.url, failed_edge=True)
    receiver.script["/hooks/B1"] = [(500, {}), (429, {"Retry-After": "1"}), (200, {})]
    doc = _open(acme, "B1")
    deadline = time.monotonic() + 30
    # Between attempts the document's workflow waits for a delivery (not runnable): poll.
    while acme.documents.wait(doc.id, timeout=30).state != "done":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    attempts = receiver.to("/hooks/B1")
    assert len(attempts) == 3
    assert len({a["headers"]["Idempotency-Key"] for a in attempts}) == 1
    assert [a["headers"]["X-Charter-Attempt"] for a in attempts] == ["1", "2", "3"]
    assert attempts[2]["at"] - attempts[1]["at"] >= 1.0  # Retry-After was honoured


def test_a_4xx_is_final_the_failed_edge_is_taken(acme, engine, receiver, sql):
    _publish(acme, receiver.url, failed_edge=True)
    receiver.script["/hooks/C1"] = [(400, {})]
    doc = _open(acme, "C1")
    done = acme.documents.wait(doc.id, timeout=20)
    assert done.workflow.context.get("fallback") is True and "sent" not in done.workflow.context
    assert len(receiver.to("/hooks/C1")) == 1  # not retried
    [(status, error)] = sql(
        "SELECT status, error FROM charter.side_effects WHERE run_id = %s", done.workflow.run_id
    )
    assert status == "dead_letter" and "HTTP 400" in error


def test_without_a_failed_edge_a_dead_letter_fails_the_instance(acme, engine, receiver):
    _publish(acme, receiver.url, failed_edge=False)
    receiver.script["/hooks/D1"] = [(404, {})]
    doc = _open(acme, "D1")
    failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed" and failed.error["sqlstate"] == "CH059"  # DELIVERY_FAILED
    assert "HTTP 404" in failed.error["message"]


def test_a_refused_connection_is_retried(acme, engine, sql):
    _publish(acme, "http://127.0.0.1:9", failed_edge=True)  # nothing listens on port 9
    doc = _open(acme, "E1")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = sql("SELECT status, attempts, error FROM charter.side_effects")
        if rows and rows[0][1] >= 2 and rows[0][0] == "failed":
            break
        time.sleep(0.1)
    status, attempts, error = rows[0]
    assert status == "failed" and attempts >= 2 and "ConnectError" in error
    waiting = acme.documents.get(doc.id).workflow
    assert [w.kind for w in waiting.waiting_for] == ["delivery"]


def test_a_receiver_that_does_not_answer_in_time_is_retried(acme, db_url, receiver, monkeypatch):
    monkeypatch.setenv("CHARTER_WEBHOOK_TIMEOUT", "0.5")
    _publish(acme, receiver.url, failed_edge=True)
    receiver.script["/hooks/T1"] = [(200, {}, 2.0), (200, {})]  # the first answer is too late
    with running_worker(db_url, poll_interval=0.05):
        doc = _open(acme, "T1")
        deadline = time.monotonic() + 30
        while acme.documents.wait(doc.id, timeout=30).state != "done":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    attempts = receiver.to("/hooks/T1")
    assert len(attempts) == 2
    assert attempts[0]["headers"]["Idempotency-Key"] == attempts[1]["headers"]["Idempotency-Key"]


def test_a_slow_receiver_keeps_its_lease_and_is_sent_once(acme, db_url, receiver, monkeypatch):
    # The receiver takes 3 s; the lease is 1 s: the worker renews it while it waits, so no
    # other worker (and no later claim) sends the webhook again.
    _publish(acme, receiver.url, failed_edge=True)
    receiver.script["/hooks/L1"] = [(200, {}, 3.0)]
    with (
        running_worker(db_url, poll_interval=0.05, lease_seconds=1),
        running_worker(db_url, poll_interval=0.05, lease_seconds=1),
    ):
        doc = _open(acme, "L1")
        deadline = time.monotonic() + 30
        while acme.documents.wait(doc.id, timeout=30).state != "done":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert len(receiver.to("/hooks/L1")) == 1


def test_a_header_charter_sets_itself_is_refused_when_published(acme, receiver):
    from charter.errors import ContractError

    contract = defs.contract("notice", {"code": "string"})
    nodes = [("send", "webhook_out", {"url": receiver.url + "/x",
                                      "headers": {"Idempotency-Key": "mine"}})]  # fmt: skip
    acme.definitions.publish(contract)
    with pytest.raises(ContractError, match="set by charter"):
        acme.definitions.publish(contract, defs.org_definition("notice", nodes, []))


def test_a_payload_value_is_an_expression_as_in_an_action(acme, engine, receiver):
    """payloadTemplate means one thing everywhere: each value is an expression. A field is
    sent as its value (it once went out as the literal text "entity.ref"), a number stays a
    number, text is quoted; a {…} text template is refused at publish, with the fix."""
    contract = defs.contract("notice", {"code": "string", "total": "number"})
    payload = {"code": "entity.code", "total": "entity.total", "kind": "'notice'", "n": "2"}
    nodes = [("send", "webhook_out", {"url": receiver.url + "/p", "payloadTemplate": payload})]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("notice", nodes, []))
    doc = acme.documents.create("notice", {"code": "P1", "total": 12.5}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    deadline = time.monotonic() + 20
    while not receiver.to("/p"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [request] = receiver.to("/p")
    assert json.loads(request["body"]) == {"code": "P1", "total": 12.5, "kind": "notice", "n": 2}

    from charter.errors import NodeConfigInvalidError

    config = {"url": receiver.url + "/p", "payloadTemplate": {"code": "{entity.code}"}}
    templated = [("send", "webhook_out", config)]
    with pytest.raises(NodeConfigInvalidError, match=r"write 'entity\.code' for the value itself"):
        acme.definitions.publish(contract, defs.org_definition("notice", templated, []))


def test_a_version_stored_with_text_templates_in_its_payload_still_renders_them(
    acme, engine, receiver, db_url
):
    """Effective versions published before payloads were expressions keep their {…} text
    templates in the stored artifact; the engine renders those as it did (a lone placeholder
    keeps its value's type, other text stays text)."""
    from psycopg.types.json import Jsonb

    from charter.compiler.compiled import compiled_hash
    from charter.compiler.effective import compile_effective
    from charter.compiler.envelope import generate_envelope
    from charter.dsl.contract import EntityContract

    contract = defs.contract("notice", {"code": "string", "total": "number"})
    nodes = [("send", "webhook_out", {"url": receiver.url + "/old",
                                      "payloadTemplate": {"code": "entity.code"}})]  # fmt: skip
    definition = defs.org_definition("notice", nodes, [])
    acme.definitions.publish(contract)
    compiled = compile_effective(generate_envelope(EntityContract.from_json(contract)), definition)
    compiled["nodes"]["usr:slot:work:send"]["config"]["payloadTemplate"] = {
        "code": "{entity.code}", "total": "{entity.total}", "kind": "notice", "n": 1,
    }  # fmt: skip
    compiled["hash"] = compiled_hash(compiled)
    import psycopg

    with psycopg.connect(db_url, autocommit=True) as conn:
        # Published as a database did before node configurations were checked at publish
        # (this test's database is its own).
        conn.execute(
            "CREATE OR REPLACE FUNCTION charter._node_config_problem(p_type text, p_config jsonb)"
            " RETURNS text LANGUAGE sql IMMUTABLE SET search_path = '' AS $$ SELECT NULL $$"
        )
        conn.execute(
            "SELECT charter.publish_org_definition('acme', 'notice', %s, %s, %s)",
            (Jsonb(definition), Jsonb(definition["baseRef"]), Jsonb(compiled)),
        )
    doc = acme.documents.create("notice", {"code": "O1", "total": 3}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    deadline = time.monotonic() + 20
    while not receiver.to("/old"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [request] = receiver.to("/old")
    assert json.loads(request["body"]) == {"code": "O1", "total": 3, "kind": "notice", "n": 1}
