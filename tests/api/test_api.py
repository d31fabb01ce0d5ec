"""The HTTP API (`charter serve`) on the charter_app role: every endpoint needs a key and acts
as its actor in its org; another org's ids are 404; conflicts 409, bad input 422, policy
403; inbound events are verified by signature; /metrics and /health match SQL."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import psycopg
import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from charter.api.routes import ROUTES
from charter.db.store import perform
from charter.ops.api_keys import revoke_api_key
from charter.ops.side_effects import event_signature
from tests import runtime_definitions as defs
from tests.engine import install
from tests.flows_for_tests import analyze_site


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app"))) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_every_endpoint_refuses_a_request_without_a_valid_key(api, keys, db_url):
    for route in ROUTES:
        path = re.sub(r"{\w+}", "x", route.path)
        for headers in ({}, _as("chk_nope_nope"), {"Authorization": "Basic abc"}):
            answer = api.request(route.method, path, headers=headers, json={})
            assert answer.status_code == 401, (route.method, path, headers)
            assert answer.json()["error"]["code"] == "UNAUTHENTICATED"
    assert api.get("/metrics").status_code == 401
    # A revoked key stops working at once.
    key_id = keys["ops"].split("_")[1]
    assert api.get("/api/health", headers=_as(keys["ops"])).status_code == 200
    with psycopg.connect(db_url, autocommit=True) as owner:
        assert perform(owner, revoke_api_key(key_id)) is True
    assert api.get("/api/health", headers=_as(keys["ops"])).status_code == 401


def test_an_invoice_goes_through_the_inbox_to_approval_over_http(api, keys, engine):
    clerk, clerk2 = _as(keys["clerk"]), _as(keys["clerk2"])
    made = api.post(
        "/api/documents",
        headers=clerk,
        json={"entity_type": "ap_invoice", "data": {"grand_total": 9000, "vendor_id": "v-1"}},
    )
    assert made.status_code == 201
    doc = made.json()
    submitted = api.post(
        f"/api/documents/{doc['id']}/transitions",
        headers=clerk,
        json={"gate": "submit", "expected_version": doc["version"]},
    )
    assert submitted.status_code == 200 and submitted.json()["state"] == "submitted"
    deadline = time.monotonic() + 20
    while not (inbox := api.get("/api/approvals/inbox", headers=clerk2).json()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [request] = inbox
    snapshot = api.get(f"/api/approvals/{request['id']}/snapshot", headers=clerk2)
    assert snapshot.status_code == 200 and snapshot.json()["data"]["grand_total"] == 9000
    # The requester may not approve their own invoice (403); a stale version is 409.
    own = api.post(
        f"/api/approvals/{request['id']}/decision",
        headers=clerk,
        json={"decision": "approved", "version": request["entity_version"]},
    )
    assert own.status_code == 403 and own.json()["error"]["code"] == "APPROVAL_SELF_APPROVAL", (
        own.json()
    )
    stale = api.post(
        f"/api/approvals/{request['id']}/decision",
        headers=clerk2,
        json={"decision": "approved", "version": request["entity_version"] - 1},
    )
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "APPROVAL_VERSION_STALE"
    decided = api.post(
        f"/api/approvals/{request['id']}/decision",
        headers=clerk2,
        json={"decision": "approved", "version": request["entity_version"], "comment": "fine"},
    )
    assert decided.status_code == 200
    while api.get(f"/api/documents/{doc['id']}", headers=clerk).json()["state"] != "active":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    history = api.get(f"/api/documents/{doc['id']}/history", headers=clerk).json()
    assert [h["action"] for h in history][:2] == ["create", "submit"]


def test_documents_answer_conflicts_bad_input_and_policy_with_their_statuses(api, keys, acme):
    clerk = _as(keys["clerk"])
    doc = api.post(
        "/api/documents",
        headers=clerk,
        json={"entity_type": "ap_invoice", "data": {"grand_total": 5}},
    ).json()
    patched = api.patch(
        f"/api/documents/{doc['id']}",
        headers=clerk,
        json={"changes": {"grand_total": 6}, "expected_version": 1},
    )
    assert patched.status_code == 200 and patched.json()["version"] == 2
    conflict = api.patch(
        f"/api/documents/{doc['id']}",
        headers=clerk,
        json={"changes": {"grand_total": 7}, "expected_version": 1},
    )
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "DOCUMENT_VERSION_CONFLICT"
    for bad in ({"changes": "nope"}, {}, {"changes": {"grand_total": "many"}}):
        answer = api.patch(f"/api/documents/{doc['id']}", headers=clerk, json=bad)
        assert answer.status_code == 422, bad
    not_json = api.post("/api/documents", headers=clerk, content=b"{nope")
    assert not_json.status_code == 422 and "not JSON" in not_json.json()["error"]["message"]
    assert api.get(f"/api/documents/{doc['id']}", headers=clerk).json()["version"] == 2
    # Policy: only sales may open a memo; the clerk is refused (403) and nothing changes.
    acme.definitions.publish(
        defs.contract("memo", {"code": "string"}, policies={"open": {"roles": ["sales"]}})
    )
    memo = api.post(
        "/api/documents", headers=clerk, json={"entity_type": "memo", "data": {"code": "P1"}}
    ).json()
    refused = api.post(
        f"/api/documents/{memo['id']}/transitions", headers=clerk, json={"gate": "open"}
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "POLICY_DENIED"
    assert api.get(f"/api/documents/{memo['id']}", headers=clerk).json()["state"] == "draft"


def test_another_orgs_ids_are_404(api, keys, acme, db_url, engine):
    acme_doc = api.post(
        "/api/documents",
        headers=_as(keys["clerk"]),
        json={"entity_type": "ap_invoice", "data": {"grand_total": 5}},
    ).json()
    with psycopg.connect(db_url, autocommit=True) as owner:
        install(owner, analyze_site())
    started = api.post(
        "/api/runs",
        headers=_as(keys["ops"]),
        json={"flow": "analyze_site", "input": {"pages": ["a"]}},
    )
    assert started.status_code == 201
    run_id = started.json()["id"]
    assert api.get(f"/api/runs/{run_id}", headers=_as(keys["ops"])).json()["id"] == run_id
    assert run_id in [r["id"] for r in api.get("/api/runs", headers=_as(keys["ops"])).json()]
    globex = _as(keys["globex"])
    for method, path in (
        ("GET", f"/api/documents/{acme_doc['id']}"),
        ("GET", f"/api/documents/{acme_doc['id']}/history"),
        ("PATCH", f"/api/documents/{acme_doc['id']}"),
        ("GET", f"/api/runs/{run_id}"),
        ("POST", f"/api/runs/{run_id}/cancel"),
        ("GET", "/api/approvals/nope"),
    ):
        body = {"changes": {"grand_total": 1}} if method == "PATCH" else None
        answer = api.request(method, path, headers=globex, json=body)
        assert answer.status_code == 404, (method, path, answer.json())
    assert run_id not in [r["id"] for r in api.get("/api/runs", headers=globex).json()]
    # The health of an org shows its own flow queues, not another's.
    queues = api.get("/api/health", headers=_as(keys["ops"])).json()["flow_queues"]
    assert [q["flow"] for q in queues] == ["analyze_site"]
    assert api.get("/api/health", headers=globex).json()["flow_queues"] == []
    assert api.post(f"/api/runs/{run_id}/cancel", headers=_as(keys["ops"])).json() == {
        "id": run_id,
        "status": "cancelled",
    }


def test_inbound_events_are_verified_by_signature_and_idempotent(api, keys, acme, engine):
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
    body = json.dumps({"ok": True}).encode()
    secret = acme.side_effects.webhook_secret()
    stamp = int(time.time())
    signed = event_signature(secret, stamp, "memo:E1", body)
    headers = {**_as(keys["ops"]), "Content-Type": "application/json", "X-Event-Id": "ev-1",
               "X-Charter-Timestamp": str(stamp)}  # fmt: skip
    forged = api.post(
        "/api/events/memo:E1", headers={**headers, "X-Charter-Signature": "sha256=00"}, content=body
    )
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "SIGNATURE_INVALID"
    # X-Document-Id: the event is for that document alone, here one that does not wait.
    other = acme.documents.create("memo", {"code": "E1"}, actor="sales")
    signed_headers = {**headers, "X-Charter-Signature": signed}
    elsewhere = api.post(
        "/api/events/memo:E1",
        headers={**signed_headers, "X-Event-Id": "ev-0", "X-Document-Id": other.id},
        content=body,
    )
    assert (elsewhere.status_code, elsewhere.json()["status"]) == (202, "kept")
    unknown = api.post(
        "/api/events/memo:E1",
        headers={**signed_headers, "X-Event-Id": "ev-x", "X-Document-Id": "nope"},
        content=body,
    )
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "DOCUMENT_NOT_FOUND"
    first = api.post(
        "/api/events/memo:E1", headers={**headers, "X-Charter-Signature": signed}, content=body
    )
    assert first.status_code == 202 and first.json()["status"] == "delivered"
    again = api.post(
        "/api/events/memo:E1", headers={**headers, "X-Charter-Signature": signed}, content=body
    )
    assert again.json()["status"] == "duplicate"
    assert acme.documents.wait(doc.id, timeout=20).workflow.context["got"] is True


def test_dead_letters_health_metrics_and_openapi(api, keys, acme, engine, sql):
    ops = _as(keys["ops"])
    acme.side_effects.webhook("http://127.0.0.1:9/x", {}, max_attempts=1)
    deadline = time.monotonic() + 20
    while not (letters := api.get("/api/dead-letters", headers=ops).json()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [letter] = letters
    assert api.get("/api/dead-letters?run_id=other", headers=ops).json() == []
    health = api.get("/api/health", headers=ops).json()
    assert health["side_effects"]["dead_letters"] == 1 == len(letters)
    metrics = api.get("/metrics", headers=ops).text
    assert "charter_side_effects_dead_letters 1.0" in metrics
    [(documents,)] = sql("SELECT count(*) FROM charter.documents WHERE org_id = 'acme'")
    shown = sum(float(v) for v in re.findall(r"^charter_documents\{.*\} (\S+)$", metrics, re.M))
    assert shown == documents
    assert re.search(r"^charter_workers_alive [1-9]", metrics, re.M)
    dropped = api.post("/api/dead-letters/drop", headers=ops, json={"ids": [letter["id"]]})
    assert dropped.json() == {"dropped": [letter["id"]]}
    missing = api.post("/api/dead-letters/retry", headers=ops, json={"ids": [letter["id"]]})
    assert missing.status_code == 404
    spec = api.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.") and "/api/documents/{document_id}" in spec["paths"]
    assert {r.path for r in ROUTES} == set(spec["paths"])


def test_definitions_list_their_versions_and_the_per_slot_diff(api, keys):
    from charter.compiler.diff import diff_effective
    from charter.compiler.effective import compile_effective
    from charter.compiler.envelope import generate_envelope
    from charter.demos.use_cases import USE_CASES
    from charter.dsl.contract import EntityContract

    ops = _as(keys["ops"])
    listed = {e["entity_type"]: e for e in api.get("/api/definitions", headers=ops).json()}
    assert {"ap_invoice", "sales_order", "shipment", "royalty_period"} <= set(listed)
    invoice = listed["ap_invoice"]
    assert invoice["current_version_id"] in [v["versionId"] for v in invoice["versions"]]
    contract, org = USE_CASES["A"]
    envelope = generate_envelope(EntityContract.from_json(contract))
    expected = diff_effective(compile_effective(envelope, org), compile_effective(envelope))
    assert api.get("/api/definitions/ap_invoice/diff", headers=ops).json() == expected
    assert api.get("/api/definitions/nothing/diff", headers=ops).status_code == 404


def test_the_remaining_endpoints_do_what_they_say(api, keys, acme, engine, db_url):
    clerk, clerk2, ops = _as(keys["clerk"]), _as(keys["clerk2"]), _as(keys["ops"])
    # mutate (a declared action: the contract's gate, spelled as an action) and amend.
    doc = api.post(
        "/api/documents",
        headers=clerk,
        json={"entity_type": "ap_invoice", "data": {"grand_total": 9000}},
    ).json()
    mutated = api.post(
        f"/api/documents/{doc['id']}/mutate",
        headers=clerk,
        json={"action": "update", "changes": {"grand_total": 9100}},
    )
    assert mutated.status_code == 200 and mutated.json()["data"]["grand_total"] == 9100
    api.post(f"/api/documents/{doc['id']}/transitions", headers=clerk, json={"gate": "submit"})
    deadline = time.monotonic() + 20
    while not (inbox := api.get("/api/approvals/inbox", headers=clerk2).json()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    request_id = inbox[0]["id"]
    assert api.get(f"/api/approvals/{request_id}", headers=clerk2).json()["id"] == request_id
    assert api.get(f"/api/approvals/{request_id}/diff", headers=clerk2).status_code == 200
    amended = api.post(
        f"/api/documents/{doc['id']}/amend",
        headers=clerk,
        json={"changes": {"grand_total": 9200}, "reason": "typo"},
    )
    assert amended.status_code == 200 and amended.json()["data"]["grand_total"] == 9200
    listed = api.get("/api/documents?entity_type=ap_invoice", headers=clerk).json()
    assert doc["id"] in [d["id"] for d in listed]
    # definitions: publish, a draft, current, archive. Contracts are the owner's to publish
    # (the app may confirm one as published); org definitions are the org's.
    memo = defs.contract("memo", {"code": "string"})
    refused = api.post("/api/definitions", headers=ops, json={"contract": memo})
    assert refused.status_code == 403 and "owner" in refused.json()["error"]["message"]
    acme.definitions.publish(memo)
    confirmed = api.post("/api/definitions", headers=ops, json={"contract": memo})
    assert confirmed.status_code == 201 and confirmed.json()["status"] == "verified"
    org = defs.org_definition(
        "memo", [("x", "script", {"expression": "true", "assignTo": "context.x"})], []
    )
    draft = api.post("/api/definitions/drafts", headers=ops, json=org)
    assert draft.status_code == 201 and draft.json()["status"] == "draft"
    published = api.post(
        "/api/definitions", headers=ops, json={"contract": memo, "org_definition": org}
    )
    current = api.get("/api/definitions/memo/current", headers=ops).json()
    assert current["version_id"] == published.json()["version_id"]
    archived = api.post(f"/api/definitions/{draft.json()['version_id']}/archive", headers=ops)
    assert archived.status_code == 200 and archived.json()["status"] == "archived"
    # runs: a failed run is retried.
    with psycopg.connect(db_url, autocommit=True) as owner:
        install(owner, analyze_site())
    run_id = api.post("/api/runs", headers=ops, json={"flow": "analyze_site", "input": {}}).json()[
        "id"
    ]
    not_failed = api.post(f"/api/runs/{run_id}/retry", headers=ops)
    assert (
        not_failed.status_code == 409 and not_failed.json()["error"]["code"] == "RUN_STATE_INVALID"
    )


def test_administration_needs_a_service_key_or_a_directory_admin(api, keys, acme, db_url):
    clerk, ops = _as(keys["clerk"]), _as(keys["ops"])
    current = api.get("/api/definitions/ap_invoice/current", headers=clerk).json()
    for method, path, body in (
        ("POST", f"/api/definitions/{current['version_id']}/archive", None),
        ("POST", "/api/definitions/drafts", {"entity_type": "ap_invoice"}),
        ("POST", "/api/definitions", {"contract": {}}),
        ("POST", "/api/dead-letters/drop", {"ids": [1]}),
    ):
        refused = api.request(method, path, headers=clerk, json=body)
        assert refused.status_code == 403, (path, refused.json())
        assert refused.json()["error"]["code"] == "PERMISSION_DENIED"
        assert "directory role admin" in refused.json()["error"]["message"]
    # A user made an admin in the directory may; the service account may.
    acme.directory.put_user("clerk", roles=["ap_clerk", "admin"], email="clerk@example.com")
    assert api.post("/api/dead-letters/drop", headers=clerk, json={"ids": []}).status_code == 200
    assert api.post("/api/dead-letters/drop", headers=ops, json={"ids": []}).status_code == 200
    # A user removed from the directory: their key stops working.
    acme.directory.remove_user("clerk2")
    assert api.get("/api/documents", headers=_as(keys["clerk2"])).status_code == 401


def test_runs_are_listed_per_org_and_a_run_id_names_a_run_within_its_org(api, keys, db_url):
    with psycopg.connect(db_url, autocommit=True) as owner:
        install(owner, analyze_site())
    ops, globex = _as(keys["ops"]), _as(keys["globex"])
    body = {"flow": "analyze_site", "input": {"pages": ["a"]}}
    mine = api.post("/api/runs", headers=ops, json={**body, "run_id": "inv-42"})
    assert mine.status_code == 201
    theirs = [api.post("/api/runs", headers=globex, json=body).json()["id"] for _ in range(4)]
    listed = api.get("/api/runs?limit=2", headers=ops).json()
    assert [r["id"] for r in listed] == ["inv-42"]  # a page of acme's runs, not filtered after
    assert api.get(f"/api/runs?after={theirs[0]}", headers=ops).status_code == 422
    # A run id names a run within its org: globex's "inv-42" is globex's own run, and
    # neither org's calls see or change the other's.
    other = {**body, "input": {"pages": ["b", "c"]}}
    answer = api.post("/api/runs", headers=globex, json={**other, "run_id": "inv-42"})
    assert answer.status_code == 201, answer.json()
    assert api.get("/api/runs/inv-42", headers=ops).json()["input"] == {"pages": ["a"]}
    assert api.get("/api/runs/inv-42", headers=globex).json()["input"] == {"pages": ["b", "c"]}
    assert api.post("/api/runs/inv-42/cancel", headers=ops).status_code == 200
    assert api.get("/api/runs/inv-42", headers=ops).json()["status"] == "cancelled"
    assert api.get("/api/runs/inv-42", headers=globex).json()["status"] == "running"
    assert api.get("/api/runs/inv-43", headers=ops).status_code == 404


def test_bad_numbers_and_entity_types_are_422_not_internal_errors(api, keys):
    ops = _as(keys["ops"])
    for path in (
        "/api/health?stuck_minutes=99999999999",
        "/api/documents/x?version=99999999999",
        "/api/runs?limit=0",
        "/api/definitions/eu:ap_invoice/current",
    ):
        answer = api.get(path, headers=ops)
        assert answer.status_code == 422, (path, answer.json())
        assert "SCHEMA_NOT_CURRENT" not in json.dumps(answer.json())


def test_an_operator_pauses_resumes_cancels_and_restarts_a_documents_workflow(api, keys, engine):
    clerk, ops = _as(keys["clerk"]), _as(keys["ops"])
    made = api.post(
        "/api/documents",
        headers=clerk,
        json={"entity_type": "ap_invoice", "data": {"grand_total": 9000, "vendor_id": "v-1"}},
    ).json()
    doc = f"/api/documents/{made['id']}"
    assert api.post(f"{doc}/transitions", headers=clerk, json={"gate": "submit"}).status_code == 200
    deadline = time.monotonic() + 30  # the engine starts the instance and waits for approval
    while (api.get(doc, headers=clerk).json().get("workflow") or {}).get("status") != "running":
        assert time.monotonic() < deadline, "the document's workflow never started"
        time.sleep(0.05)
    # Only an admin (a service account, a directory admin) acts on a workflow.
    for act in ("pause", "resume", "restart"):
        refused = api.post(f"{doc}/{act}", headers=clerk)
        assert refused.status_code == 403, refused.json()
    paused = api.post(f"{doc}/pause", headers=ops, json={"reason": "dispute"})
    assert paused.status_code == 200, paused.json()
    run_id = paused.json()["workflow"]["run_id"]
    assert paused.json()["workflow"]["status"] == "paused"
    gate = {"gate": "approve", "to": "active"}
    blocked = api.post(f"{doc}/transitions", headers=clerk, json=gate)
    assert blocked.status_code == 409 and blocked.json()["error"]["code"] == "WORKFLOW_PAUSED"
    assert api.post(f"{doc}/resume", headers=ops).json()["workflow"]["status"] == "running"
    cancelled = api.post(f"/api/runs/{run_id}/cancel", headers=ops, json={"reason": "typo"})
    assert cancelled.json() == {"id": run_id, "status": "cancelled"}
    restarted = api.post(f"{doc}/restart", headers=ops, json={"reason": "undo"})
    assert restarted.status_code == 200, restarted.json()
    assert restarted.json()["workflow"]["run_id"] != run_id
    again = api.post(f"{doc}/restart", headers=ops)
    assert again.status_code == 409 and again.json()["error"]["code"] == "RUN_STATE_INVALID"
    history = api.get(f"{doc}/history", headers=clerk).json()
    acts = [
        (h["action"], h["actor"], h["reason"])
        for h in history
        if h["action"].startswith("instance.")
    ]
    assert acts == [
        ("instance.pause", "service:ops", "dispute"),
        ("instance.resume", "service:ops", None),
        ("instance.cancel", "service:ops", "typo"),
        ("instance.restart", "service:ops", "undo"),
    ]
    spec = api.get("/openapi.json").json()["paths"]["/api/documents/{document_id}/pause"]
    assert spec["post"]["requestBody"]["required"] is False


def test_the_openapi_schemas_are_the_models_the_server_validates_with(api, keys):
    """One schema: what /openapi.json says a body takes is what the server accepts."""
    spec = api.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    decide = spec["paths"]["/api/approvals/{request_id}/decision"]["post"]
    ref = decide["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = schemas[ref.rsplit("/", 1)[1]]
    assert set(body["required"]) == {"decision", "version"}
    decision = body["properties"]["decision"]
    enum = schemas[decision["$ref"].rsplit("/", 1)[1]]["enum"] if "$ref" in decision else None
    assert enum == ["approved", "rejected", "abstained"]
    # Answers are described too, and refusals name their shape.
    created = spec["paths"]["/api/documents"]["post"]["responses"]
    assert created["201"]["content"]["application/json"]["schema"]["$ref"].endswith("/Document")
    assert created["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    clerk = _as(keys["clerk"])
    for bad, named in (({"decision": "maybe", "version": 1}, "'decision'"),
                       ({"decision": "approved", "version": "1"}, "'version'"),
                       ({"decision": "approved"}, "'version'"),
                       ({"decision": "approved", "version": True}, "'version'")):  # fmt: skip
        answer = api.post("/api/approvals/x/decision", headers=clerk, json=bad)
        assert answer.status_code == 422, bad
        error = answer.json()["error"]
        assert error["code"] == "REQUEST_INVALID" and named in error["message"], (bad, error)
