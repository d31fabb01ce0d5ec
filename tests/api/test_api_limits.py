"""Limits and odd inputs over HTTP: every refusal is a JSON error with a code, never a 500
and never a body held whole. A body past CHARTER_MAX_BODY_BYTES is 413 from its
Content-Length or as it streams; JSON past 100 levels is 422 on every endpoint; a NUL in the
path is 400; unknown routes and methods are 404/405; every answer carries the security
headers."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import uvicorn
from starlette.testclient import TestClient

from charter import Client
from charter.api import create_app
from charter.api.routes import ROUTES
from charter.db.store import perform
from charter.ops.api_keys import create_api_key
from charter.ops.side_effects import event_signature
from tests.servers import free_port

LIMIT = 64 * 1024


@pytest.fixture
def api(db_url, login, monkeypatch) -> Iterator[TestClient]:
    monkeypatch.setenv("CHARTER_MAX_BODY_BYTES", str(LIMIT))
    with TestClient(create_app(login("charter_app"))) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _coded(answer, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == code, answer.text
    assert answer.json()["error"]["message"]


@pytest.fixture
def server(db_url, login, monkeypatch) -> Iterator[tuple[str, int]]:
    """The app under uvicorn in a thread, as `charter serve` serves it: a real socket, so a
    body can be sent in part and the server's answer read before the rest."""
    port = free_port()
    monkeypatch.setenv("CHARTER_MAX_BODY_BYTES", str(LIMIT))
    app = create_app(login("charter_app"))
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield ("127.0.0.1", port)
    instance.should_exit = True
    thread.join(20)


def _answer_to_a_body_never_finished(
    server: tuple[str, int], head: str, body: bytes
) -> dict[str, Any]:
    """Send the request line and headers and the start of a body that never ends; the
    server's answer, which it can only give before reading the body whole."""
    with socket.create_connection(server, timeout=20) as conn:
        conn.sendall(head.encode() + b"\r\n" + body)
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return {"status": int(status_line.split()[1]), "body": json.loads(payload)}


def test_a_body_larger_than_the_limit_is_413_before_it_is_read(server, keys):
    auth = f"Authorization: Bearer {keys['clerk']}\r\n"
    # Declared by Content-Length: answered without waiting for a byte of it.
    head = (f"POST /api/documents HTTP/1.1\r\nHost: x\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {100 * LIMIT}\r\n")  # fmt: skip
    answer = _answer_to_a_body_never_finished(server, head, b"")
    assert answer["status"] == 413 and answer["body"]["error"]["code"] == "REQUEST_TOO_LARGE"
    assert "CHARTER_MAX_BODY_BYTES" in answer["body"]["error"]["message"]
    # Chunked, with no length: counted as it streams, refused once past the limit although
    # the body has not ended.
    head = f"POST /api/documents HTTP/1.1\r\nHost: x\r\n{auth}Transfer-Encoding: chunked\r\n"
    chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"
    answer = _answer_to_a_body_never_finished(server, head, chunk * (LIMIT // 0x4000 + 1))
    assert answer["status"] == 413 and answer["body"]["error"]["code"] == "REQUEST_TOO_LARGE"
    # The dashboard's forms too, before any key is looked at.
    head = ("POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: "
            f"application/x-www-form-urlencoded\r\nContent-Length: {LIMIT + 1}\r\n")  # fmt: skip
    assert _answer_to_a_body_never_finished(server, head, b"key=")["status"] == 413


def test_a_body_at_the_limit_is_read(api, keys):
    fits = api.post("/api/documents", headers=_as(keys["clerk"]), content=b" " * LIMIT)
    _coded(fits, 422, "REQUEST_INVALID")  # read, and refused for what it says
    _coded(api.post("/api/documents", content=b" " * (LIMIT + 1)), 413, "REQUEST_TOO_LARGE")


def test_the_body_limit_defaults_to_one_mebibyte_and_reads_charter_max_body_bytes(
    db_url, login, keys, monkeypatch
):
    with TestClient(create_app(login("charter_app"))) as default:
        body = b" " * (1024 * 1024 + 1)
        _coded(default.post("/api/documents", content=body), 413, "REQUEST_TOO_LARGE")
    monkeypatch.setenv("CHARTER_MAX_BODY_BYTES", "100")
    with TestClient(create_app(login("charter_app"))) as small:
        _coded(small.post("/api/documents", content=b" " * 101), 413, "REQUEST_TOO_LARGE")


def _deep(levels: int) -> str:
    return '{"data":' + "[" * levels + "]" * levels + "}"


def test_json_deeper_than_100_levels_is_422_on_every_endpoint(api, keys, db_url):
    with Client(db_url, org_id="acme") as acme:  # an admin, so no endpoint refuses with 403
        acme.directory.put_user("root", roles=["admin", "ap_clerk"])
        secret = acme.side_effects.webhook_secret().encode()
    with psycopg.connect(db_url, autocommit=True) as owner:
        admin = str(perform(owner, create_api_key("acme", "root", None, None)).key)
    bodies = [route for route in ROUTES if route.body is not None]
    assert len(bodies) >= 10
    for route in bodies:
        path = re.sub(r"{\w+}", "x", route.path)
        for levels in (101, 5000):
            body = _deep(levels).encode()
            stamp = int(time.time())  # inbound events are signed with their time and key
            signed = event_signature(secret.decode(), stamp, "x", body)
            headers = {**_as(admin), "X-Charter-Signature": signed,
                       "X-Charter-Timestamp": str(stamp)}  # fmt: skip
            answer = api.request(route.method, path, headers=headers, content=body)
            _coded(answer, 422, "REQUEST_INVALID")
            assert "100 levels" in answer.json()["error"]["message"], (route.path, levels)
    # 100 levels of data is accepted as JSON (and refused, here, for what it says).
    answer = api.post("/api/documents", headers=_as(keys["clerk"]), content=_deep(100))
    assert answer.status_code == 422 and "100 levels" not in answer.text
    # Brackets inside strings are text, not nesting.
    text = json.dumps({"entity_type": "ap_invoice", "data": {"note": "[" * 5000}})
    answer = api.post("/api/documents", headers=_as(keys["clerk"]), content=text)
    assert "100 levels" not in answer.text


def test_a_nul_in_the_path_is_400(api, keys):
    for path in ("/api/documents/a%00b", "/api/runs/r%00/cancel", "/api/approvals/%00",
                 "/documents/a%00b"):  # fmt: skip
        answer = api.request("POST" if path.endswith("cancel") else "GET", path,
                             headers=_as(keys["clerk"]))  # fmt: skip
        _coded(answer, 400, "REQUEST_INVALID")
        assert "U+0000" in answer.json()["error"]["message"]


def test_unknown_routes_and_wrong_methods_answer_in_the_json_error_shape(api, keys):
    _coded(api.get("/api/nothing-here", headers=_as(keys["clerk"])), 404, "ROUTE_NOT_FOUND")
    _coded(api.get("/no/such/page"), 404, "ROUTE_NOT_FOUND")
    wrong = api.delete("/api/documents", headers=_as(keys["clerk"]))
    _coded(wrong, 405, "METHOD_NOT_ALLOWED")
    assert wrong.headers["allow"] in wrong.json()["error"]["message"]
    _coded(api.put("/openapi.json"), 405, "METHOD_NOT_ALLOWED")


def test_every_answer_carries_the_security_headers(api, keys):
    for answer in (api.get("/sign-in"), api.get("/static/charter.css"), api.get("/api/health"),
                   api.get("/nowhere"), api.get("/", follow_redirects=False)):  # fmt: skip
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        policy = answer.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_a_number_out_of_range_is_422_argument_invalid_naming_the_field(api, keys, acme):
    doc = acme.documents.create("ap_invoice", {"grand_total": 1}, actor="clerk")
    clerk = _as(keys["clerk"])
    for number in (2**31, 2**63, 10**30, -(2**40)):
        answer = api.patch(f"/api/documents/{doc.id}", headers=clerk,
                           json={"changes": {}, "expected_version": number})  # fmt: skip
        _coded(answer, 422, "ARGUMENT_INVALID")
        assert "expected_version" in answer.json()["error"]["message"]
        answer = api.post("/api/approvals/x/decision", headers=clerk,
                          json={"decision": "approved", "version": number})  # fmt: skip
        _coded(answer, 422, "ARGUMENT_INVALID")
        assert "'version'" in answer.json()["error"]["message"]  # as the body names it
    answer = api.post("/api/dead-letters/retry", headers=clerk, json={"ids": [1, 10**30]})
    _coded(answer, 422, "ARGUMENT_INVALID")
    assert "ids" in answer.json()["error"]["message"]


def test_a_document_past_its_size_limit_is_413_document_too_large(db_url, login, keys, monkeypatch):
    monkeypatch.setenv("CHARTER_MAX_BODY_BYTES", str(4 * 1024 * 1024))  # the body may pass
    with TestClient(create_app(login("charter_app"))) as api:
        data = {"grand_total": 1, "vendor_id": "x" * (1024 * 1024)}
        answer = api.post("/api/documents", headers=_as(keys["clerk"]),
                          json={"entity_type": "ap_invoice", "data": data})  # fmt: skip
        _coded(answer, 413, "DOCUMENT_TOO_LARGE")
        assert "1048576" in answer.json()["error"]["message"]
