"""What webhooks may reach and what they reveal (issue 37 §3): the destination policy is on
by default (no loopback, link-local, private, multicast or metadata address, in any
spelling, checked on the address resolved at connect time; ``CHARTER_WEBHOOK_ALLOW`` opts
networks in); a receiver's response body is kept to 4 KB and shown to admins only; request
headers that carry secrets are redacted for everyone else; a header value with a line break
is a dead letter at once; inbound events are signed over a timestamp, their key and body."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from charter.errors import ConfigurationError, WebhookDestinationDeniedError
from charter.ops.side_effects import event_signature
from charter.worker.channels.destinations import (
    DestinationDenied,
    DestinationPolicy,
    allowed_networks,
)
from charter.worker.channels.webhook import SIGNATURE_HEADER
from tests import runtime_definitions as defs
from tests.servers import Receiver
from tests.workers import running_worker


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _until(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# -- the destination policy ---------------------------------------------------------------


def test_no_webhook_reaches_a_private_address_in_any_spelling_by_default(
    acme, db_url, receiver, monkeypatch
):
    monkeypatch.delenv("CHARTER_WEBHOOK_ALLOW", raising=False)  # the default: nothing opted in
    port = receiver.url.rsplit(":", 1)[1]
    urls = [
        f"http://127.0.0.1:{port}/plain",
        f"http://2130706433:{port}/decimal",
        f"http://0177.0.0.1:{port}/octal",
        f"http://0x7f.1:{port}/hex",
        f"http://[::ffff:127.0.0.1]:{port}/mapped",
        f"http://localhost:{port}/name",  # a name that resolves there
        f"http://0.0.0.0:{port}/unspecified",
        "http://169.254.169.254/latest/meta-data/",  # the cloud metadata address
        "http://10.1.2.3/rfc1918",
        "http://192.168.0.1/rfc1918",
        "http://[fd00::1]/unique-local",
        "http://[fe80::1]/link-local",
        "http://224.0.0.1/multicast",
    ]
    with running_worker(db_url, poll_interval=0.05):
        queued = {u: acme.side_effects.webhook(u, {"n": 1}, max_attempts=8).id for u in urls}
        letters = _until(lambda: len(found := acme.dead_letters.list()) == len(urls) and found)
    for letter in letters:
        assert letter.attempts == 1, letter  # at once: never retried
        assert letter.last_error.startswith("WEBHOOK_DESTINATION_DENIED: "), letter
        assert "CHARTER_WEBHOOK_ALLOW" in letter.last_error
    assert {d.id for d in letters} == set(queued.values())
    assert receiver.requests == []  # nothing reached the listening receiver


def test_an_allowed_network_is_reached_and_others_stay_refused(acme, db_url, receiver, monkeypatch):
    # localhost may resolve to ::1 as well: every address a name gives must be allowed.
    monkeypatch.setenv("CHARTER_WEBHOOK_ALLOW", "127.0.0.1/32, ::1/128, 10.0.0.0/8")
    port = receiver.url.rsplit(":", 1)[1]
    with running_worker(db_url, poll_interval=0.05):
        ok = acme.side_effects.webhook(f"http://localhost:{port}/in", {})
        mapped = acme.side_effects.webhook(f"http://[::ffff:127.0.0.1]:{port}/mapped", {})
        denied = acme.side_effects.webhook("http://192.168.1.1/out", {})
        _until(lambda: acme.side_effects.get(ok.id).status == "completed")
        _until(lambda: acme.side_effects.get(mapped.id).status == "completed")
        letter = _until(
            lambda: (e := acme.side_effects.get(denied.id)).status == "dead_letter" and e
        )
    assert len(receiver.to("/in")) == 1 and len(receiver.to("/mapped")) == 1
    assert "192.168.1.1" in letter.last_error and "private" in letter.last_error


def test_the_policy_judges_every_address_a_name_resolves_to():
    policy = DestinationPolicy(allow=[])
    for address in ("127.0.0.1", "::1", "::ffff:10.0.0.1", "100.64.0.1", "169.254.169.254",
                    "fd00:ec2::254", "ff02::1", "0.0.0.0"):  # fmt: skip
        with pytest.raises(DestinationDenied, match="WEBHOOK_DESTINATION_DENIED"):
            policy.check("host.example", _ip(address))
    policy.check("host.example", _ip("93.184.215.14"))  # a public address passes
    policy.check("host.example", _ip("2606:4700::1111"))
    opted = DestinationPolicy(allow=DestinationPolicy().allow)  # from the environment
    opted.check("tests", _ip("127.0.0.1"))  # the test session allows loopback explicitly
    assert [str(n) for n in allowed_networks(" 10.0.0.0/8 ,::1")] == ["10.0.0.0/8", "::1/128"]
    with pytest.raises(ConfigurationError, match="CHARTER_WEBHOOK_ALLOW: 'ten' is not"):
        allowed_networks("10.0.0.0/8,ten")


def _ip(text: str) -> Any:
    import ipaddress

    return ipaddress.ip_address(text)


def test_a_refused_destination_fails_the_instance_with_its_code(acme, db_url, monkeypatch):
    monkeypatch.delenv("CHARTER_WEBHOOK_ALLOW", raising=False)
    contract = defs.contract("notice", {"code": "string"})
    nodes = [("send", "webhook_out", {"url": "http://169.254.169.254/hooks/{entity.code}"})]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("notice", nodes, []))
    with running_worker(db_url, poll_interval=0.05):
        doc = acme.documents.create("notice", {"code": "M1"}, actor="sales")
        acme.documents.transition(doc.id, "open", actor="sales")
        failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed"
    assert failed.error["sqlstate"] == WebhookDestinationDeniedError.sqlstate == "CH105"
    assert "WEBHOOK_DESTINATION_DENIED" in failed.error["message"]


def test_a_webhook_whose_host_comes_from_document_data_is_warned_about_at_publish(acme):
    contract = defs.contract("notice", {"code": "string", "site": "string"})
    acme.definitions.publish(contract)
    from_data = [("send", "webhook_out", {"url": "https://{entity.site}/hooks"})]
    published = acme.definitions.publish(contract, defs.org_definition("notice", from_data, []))
    [warning] = published.warnings
    assert warning.startswith("WEBHOOK_HOST_FROM_DATA: node usr:slot:work:send")
    assert "{entity.site}" in warning
    in_path = [("send", "webhook_out", {"url": "https://hooks.example.com/{entity.site}"})]
    published = acme.definitions.publish(contract, defs.org_definition("notice", in_path, []))
    assert published.warnings == ()


# -- a header value with a line break -----------------------------------------------------


def test_a_header_with_a_line_break_from_document_data_is_a_dead_letter_at_once(
    acme, engine, receiver, sql
):
    contract = defs.contract("notice", {"code": "string"})
    nodes = [
        ("send", "webhook_out", {"url": receiver.url + "/hooks",
                                 "headers": {"X-Tenant": "{entity.code}"}}),
        ("sent", "script", {"expression": "true", "assignTo": "context.sent"}),
        ("fallback", "script", {"expression": "true", "assignTo": "context.fallback"}),
    ]  # fmt: skip
    edges = [("send", "sent", {}), ("send", "fallback", {"label": "failed"})]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("notice", nodes, edges))
    doc = acme.documents.create("notice", {"code": "A1\r\nX-Injected: yes"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    done = acme.documents.wait(doc.id, timeout=20)
    assert done.workflow.context.get("fallback") is True
    [(status, attempts, error)] = sql(
        "SELECT status, attempts, error FROM charter.side_effects WHERE run_id = %s",
        done.workflow.run_id,
    )
    assert (status, attempts) == ("dead_letter", 1)
    assert "X-Tenant" in error and "line break" in error
    assert receiver.requests == []


# -- what a receiver said, and the headers sent, shown to admins only -----------------------


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app"))) as client:
        yield client


def test_a_receivers_body_is_kept_to_4_kb_and_shown_to_admins_only(
    acme, engine, receiver, api, keys
):
    receiver.script["/big"] = [(422, {"Content-Type": "text/plain"})]
    receiver.bodies["/big"] = b"internal detail " * 1000  # 16,000 bytes
    letter = acme.side_effects.webhook(receiver.url + "/big", {"n": 1})
    effect = _until(lambda: (e := acme.side_effects.get(letter.id)).status == "dead_letter" and e)
    assert len(effect.response["body"]) == 4096
    assert effect.response["body"].startswith("internal detail internal")
    [for_admin] = api.get("/api/dead-letters", headers=_as(keys["ops"])).json()
    assert len(for_admin["response"]["body"]) == 4096
    [for_clerk] = api.get("/api/dead-letters", headers=_as(keys["clerk"])).json()
    assert for_clerk["response"] == {"status": 422, "headers": {"content-type": "text/plain"}}
    shown = api.get(f"/api/dead-letters/{letter.id}", headers=_as(keys["clerk"])).json()
    assert "body" not in shown["response"] and shown["id"] == letter.id
    shown = api.get(f"/api/dead-letters/{letter.id}", headers=_as(keys["ops"])).json()
    assert len(shown["response"]["body"]) == 4096


def test_a_receivers_body_stays_out_of_the_instance(acme, engine, receiver):
    contract = defs.contract("notice", {"code": "string"})
    nodes = [("send", "webhook_out", {"url": receiver.url + "/hooks"})]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("notice", nodes, []))
    receiver.bodies["/hooks"] = json.dumps({"session": "s3cr3t-from-the-receiver"}).encode()
    doc = acme.documents.create("notice", {"code": "B1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    done = acme.documents.wait(doc.id, timeout=20)
    step = acme.get_run(done.workflow.run_id).step("usr:slot:work:send")
    assert step.output["delivery"]["response"]["status"] == 200
    assert "s3cr3t" not in json.dumps(step.output)
    [effect] = [e for e in [acme.side_effects.get(step.output["delivery"]["effectId"])] if e]
    assert "s3cr3t-from-the-receiver" in effect.response["body"]  # kept, for admins


def test_headers_that_carry_secrets_are_redacted_for_all_but_admins(
    acme, engine, receiver, api, keys
):
    receiver.script["/gone"] = [(410, {})]
    headers = {"Authorization": "Bearer s3cret", "Cookie": "sid=s3cret",
               "X-Api-Key": "s3cret", "X-Auth-Token": "s3cret", "X-Client-Secret": "s3cret",
               "X-Tenant": "acme"}  # fmt: skip
    letter = acme.side_effects.webhook(receiver.url + "/gone", {"n": 1}, headers=headers)
    _until(lambda: acme.side_effects.get(letter.id).status == "dead_letter")
    clerk, ops = _as(keys["clerk"]), _as(keys["ops"])
    [listed] = api.get("/api/dead-letters", headers=clerk).json()
    shown = api.get(f"/api/dead-letters/{letter.id}", headers=clerk).json()
    for seen in (listed, shown):
        assert "s3cret" not in json.dumps(seen)
        sent = seen["request"]["headers"]
        assert sent == {**dict.fromkeys(headers, "[redacted]"), "X-Tenant": "acme"}
    [listed] = api.get("/api/dead-letters", headers=ops).json()
    assert listed["request"]["headers"] == headers
    assert (
        api.get(f"/api/dead-letters/{letter.id}", headers=ops).json()["request"]["headers"]
        == headers
    )
    missing = api.get("/api/dead-letters/999999", headers=ops)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "DEAD_LETTER_NOT_FOUND"
    # What the receiver got was the real thing.
    [request] = receiver.to("/gone")
    assert request["headers"]["Authorization"] == "Bearer s3cret"


# -- inbound events -------------------------------------------------------------------------


def _waiting_memo(acme):
    contract = defs.contract("memo", {"code": "string"})
    nodes = [
        ("hold", "wait_event", {"eventKey": "memo:{entity.code}"}),
        ("got", "script", {"expression": "context.event.ok", "assignTo": "context.got"}),
    ]
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, defs.org_definition("memo", nodes, [("hold", "got", {})]))
    doc = acme.documents.create("memo", {"code": "E1"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    acme.documents.wait(doc.id, timeout=20)
    return doc


def test_an_inbound_event_is_signed_over_its_timestamp_key_and_body(
    acme, engine, api, keys, receiver
):
    doc = _waiting_memo(acme)
    secret = acme.side_effects.webhook_secret()
    body = json.dumps({"ok": True}).encode()
    base = {**_as(keys["ops"]), "Content-Type": "application/json", "X-Event-Id": "ev-1"}

    def post(stamp: Any, signed: str, key: str = "memo:E1") -> Any:
        headers = {**base, "X-Charter-Timestamp": str(stamp), "X-Charter-Signature": signed}
        return api.post(f"/api/events/{key}", headers=headers, content=body)

    now = int(time.time())
    # The body alone signed (the old scheme, and every outbound webhook's) is refused.
    body_only = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    refused = post(now, body_only)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "SIGNATURE_INVALID"
    assert "X-Charter-Timestamp" in refused.json()["error"]["message"]
    # Outside five minutes, or with no timestamp, even a right signature is refused.
    for stamp in (now - 301, now + 301, "", "soon"):
        stale = post(stamp, event_signature(secret, stamp, "memo:E1", body))
        assert stale.status_code == 401 and stale.json()["error"]["code"] == "SIGNATURE_INVALID"
    # A signature for another event key does not carry over.
    moved = post(now, event_signature(secret, now, "memo:OTHER", body))
    assert moved.status_code == 401
    ok = post(now, event_signature(secret, now, "memo:E1", body))
    assert (ok.status_code, ok.json()["status"]) == (202, "delivered")
    assert acme.documents.wait(doc.id, timeout=20).workflow.context["got"] is True


def test_a_signed_outbound_webhook_cannot_be_replayed_as_an_inbound_event(
    acme, engine, api, keys, receiver
):
    _waiting_memo(acme)
    acme.side_effects.webhook(receiver.url + "/out", {"ok": True})
    [sent] = _until(lambda: receiver.to("/out"))
    replay = {**_as(keys["ops"]), "Content-Type": "application/json", "X-Event-Id": "ev-r",
              "X-Charter-Timestamp": str(int(time.time())),
              "X-Charter-Signature": sent["headers"][SIGNATURE_HEADER]}  # fmt: skip
    answer = api.post("/api/events/memo:E1", headers=replay, content=sent["body"])
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "SIGNATURE_INVALID"
