"""The workflow builder's endpoints over HTTP: what the builder reads, live compilation with
each problem on the node or edge it concerns, expression checks with their caret, the
version history, publishing without the contract, rollback (new documents follow the
restored definition, running instances stay on theirs), the template library, the builder
page, and the page's own calls to the API with its session and CSRF token."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from charter.compiler import node_schemas
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.demos.use_cases import invoice_contract, invoice_org
from charter.dsl.contract import EntityContract
from charter.dsl.slots import OrgWorkflowDefinition
from charter.library.templates import TEMPLATES

REVIEW = "slot:review"


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _stored(definition: dict[str, Any]) -> dict[str, Any]:
    """An org definition as it is stored: with its defaults written out."""
    return OrgWorkflowDefinition.from_json(definition).to_json()


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _problems(api: TestClient, key: str, definition: Any) -> list[dict[str, Any]]:
    answer = api.post(
        "/api/definitions/compile", headers=_as(key), json={"orgDefinition": definition}
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["ok"] is False, answer.json()
    return list(answer.json()["errors"])


def test_the_builder_reads_contract_envelope_definition_and_node_schemas(api, keys):
    answer = api.get("/api/definitions/ap_invoice/builder", headers=_as(keys["ops"]))
    assert answer.status_code == 200
    found = answer.json()
    envelope = generate_envelope(EntityContract.from_json(invoice_contract()))
    assert found["entityType"] == "ap_invoice"
    assert found["envelopeVersion"] == 1 and found["latestEnvelopeVersion"] == 1
    assert found["envelope"]["slots"] == envelope["slots"]
    assert found["contract"]["fields"] == invoice_contract()["fields"]
    assert found["fields"] == invoice_contract()["fields"]
    assert found["definition"] == _stored(invoice_org())
    assert found["draft"] is None and found["draftVersionId"] is None
    assert found["currentVersionId"].startswith("wf_ver_")
    assert found["nodeSchemas"] == node_schemas.json_schema()
    assert set(found["nodeTypes"]) == set(node_schemas.NODE_TYPES)
    assert {"true", "false", "timeout", "failed", "approved", "rejected"} <= set(
        found["edgeLabels"]
    )
    assert found["functions"] == [] and "contains" in found["operators"]
    assert found["canEdit"] is True
    # A clerk may read it but not edit; a saved draft shows; an unknown type is 404.
    clerk = api.get("/api/definitions/ap_invoice/builder", headers=_as(keys["clerk"])).json()
    assert clerk["canEdit"] is False
    draft = copy.deepcopy(invoice_org())
    draft["slots"].pop("slot:posting")
    saved = api.post("/api/definitions/drafts", headers=_as(keys["ops"]), json=draft)
    assert saved.status_code == 201
    again = api.get("/api/definitions/ap_invoice/builder", headers=_as(keys["ops"])).json()
    assert again["draft"] == _stored(draft)
    assert again["draftVersionId"] == saved.json()["version_id"]
    unknown = api.get("/api/definitions/nothing/builder", headers=_as(keys["ops"]))
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "ENTITY_TYPE_UNKNOWN"
    bad = api.get("/api/definitions/Not-A-Type/builder", headers=_as(keys["ops"]))
    assert bad.status_code == 422


def test_compile_answers_the_compiled_workflow_and_its_diff(api, keys):
    body = {"orgDefinition": invoice_org()}
    answer = api.post("/api/definitions/compile", headers=_as(keys["clerk"]), json=body)
    assert answer.status_code == 200
    found = answer.json()
    envelope = generate_envelope(EntityContract.from_json(invoice_contract()))
    compiled = compile_effective(envelope, invoice_org())
    assert found == {
        "ok": True,
        "compiled": compiled,
        "diff": diff_effective(compiled, compile_effective(envelope)),
        "warnings": [],
    }
    added = {n["id"] for n in found["diff"]["slots"][REVIEW]["addedNodes"]}
    assert "usr:slot:review:fast_lane" in added
    # The snake_case name works too.
    snake = api.post(
        "/api/definitions/compile",
        headers=_as(keys["clerk"]),
        json={"org_definition": invoice_org()},
    )
    assert snake.json()["ok"] is True


def test_compile_names_the_node_or_edge_of_each_problem(api, keys):
    key = keys["clerk"]
    # A cycle: the edge that closes it.
    cycle = copy.deepcopy(invoice_org())
    cycle["slots"][REVIEW]["edges"].append(
        {
            "id": "back",
            "sourceNodeId": "usr:slot:review:review",
            "targetNodeId": "usr:slot:review:fast_lane",
        }
    )
    [problem] = _problems(api, key, cycle)
    assert problem["code"] == "WORKFLOW_CYCLE" and problem["rule"] == "WF-06"
    assert problem["edgeId"] == "back" and problem["slotId"] == REVIEW
    assert problem["nodeId"] == "usr:slot:review:fast_lane"
    # A node nothing leads to: that node.
    lonely = copy.deepcopy(invoice_org())
    lonely["slots"]["slot:posting"]["nodes"].append(
        {"id": "usr:slot:posting:lonely", "type": "script", "config": {"expression": "true"}}
    )
    [problem] = _problems(api, key, lonely)
    assert problem["code"] == "SLOT_ENTRY_INVALID"
    assert problem["nodeId"] == "usr:slot:posting:lonely"
    assert problem["slotId"] == "slot:posting"
    # Several problems at once, each where it is: a bad expression with its caret, an edge's
    # condition, a looser edit window, a node outside its slot's namespace (WF-06).
    several = copy.deepcopy(invoice_org())
    several["slots"][REVIEW]["nodes"][0]["config"]["expression"] = "entity.grand_total >"
    several["slots"][REVIEW]["edges"][0]["condition"] = "entity.vendor_id + 1"
    several["slots"][REVIEW]["editWindowOverride"] = "editable"
    several["slots"]["slot:posting"]["nodes"][0]["id"] = "usr:slot:review:post"
    found = _problems(api, key, several)
    by_code = {p["code"]: p for p in found}
    expression = by_code["NODE_CONFIG_INVALID"]
    assert expression["nodeId"] == "usr:slot:review:fast_lane"
    assert expression["path"] == "config.expression"
    assert (expression["line"], expression["caret"]) == (1, 20)
    edge = by_code["SLOT_EDGE_CONDITION_INVALID"]
    assert edge["edgeId"] == "fast_lane->auto_approved" and edge["caret"] == 17
    assert by_code["SLOT_NODE_ID_INVALID"]["nodeId"] == "usr:slot:review:post"
    assert by_code["SLOT_NODE_ID_INVALID"]["slotId"] == "slot:posting"
    assert by_code["SLOT_NODE_ID_INVALID"]["rule"] == "WF-06"
    # A looser edit window is found once the slot's nodes compile.
    looser = copy.deepcopy(invoice_org())
    looser["slots"][REVIEW]["editWindowOverride"] = "editable"
    [problem] = _problems(api, key, looser)
    assert problem["code"] == "SLOT_EDIT_WINDOW_LOOSER" and problem["path"] == "editWindowOverride"
    # No baseRef, an unknown entity type or envelope version: ok false, not an error.
    assert _problems(api, key, {"slots": {}})[0]["code"] == "ORG_DEFINITION_INVALID"
    unknown = {"baseRef": {"entityType": "nothing", "envelopeVersion": 1}, "slots": {}}
    assert _problems(api, key, unknown)[0]["code"] == "ENTITY_TYPE_UNKNOWN"
    later = {"baseRef": {"entityType": "ap_invoice", "envelopeVersion": 7}, "slots": {}}
    assert _problems(api, key, later)[0]["code"] == "ENTITY_TYPE_UNKNOWN"


def test_malformed_builder_requests_are_refused(api, keys):
    ops = _as(keys["ops"])
    for path in ("/api/definitions/compile", "/api/expressions/check"):
        not_json = api.post(path, headers={**ops, "Content-Type": "application/json"}, content=b"{")
        assert not_json.status_code == 422
        assert not_json.json()["error"]["code"] == "REQUEST_INVALID"
        empty = api.post(path, headers=ops, json={})
        assert empty.status_code == 422 and "needs" in empty.json()["error"]["message"]
    wrong = api.post("/api/definitions/compile", headers=ops, json={"orgDefinition": [1]})
    assert wrong.status_code == 422
    kind = api.post(
        "/api/expressions/check",
        headers=ops,
        json={"entityType": "ap_invoice", "expression": "true", "kind": "loop"},
    )
    assert kind.status_code == 422


def test_expressions_are_checked_against_the_contracts_fields(api, keys):
    def check(expression: str, kind: str = "condition", entity_type: str = "ap_invoice") -> Any:
        return api.post(
            "/api/expressions/check",
            headers=_as(keys["clerk"]),
            json={"entityType": entity_type, "expression": expression, "kind": kind},
        )

    assert check("entity.grand_total > 10000").json() == {"ok": True, "type": "boolean"}
    assert check("entity.grand_total", "script").json() == {"ok": True, "type": "number"}
    not_boolean = check("entity.grand_total", "edge").json()
    assert not_boolean["ok"] is False
    assert not_boolean["error"]["code"] == "EXPR_TYPE_MISMATCH"
    typo = check("entity.grand_total > 1 && entity.vendr == 'x'").json()["error"]
    assert typo["code"] == "EXPR_UNKNOWN_VARIABLE"
    assert (typo["line"], typo["caret"]) == (1, 26)
    unfinished = check("entity.grand_total >").json()["error"]
    assert unfinished["code"] == "EXPR_SYNTAX" and unfinished["caret"] == 20
    assert check("true", entity_type="nothing").status_code == 404


def test_templates_are_listed_and_read_one_by_one(api, keys):
    listed = api.get("/api/templates", headers=_as(keys["clerk"])).json()
    assert [t["name"] for t in listed] == list(TEMPLATES)
    one = api.get("/api/templates/invoice_approval", headers=_as(keys["clerk"])).json()
    template = TEMPLATES["invoice_approval"]
    assert one == {
        "name": "invoice_approval",
        "title": "Invoice approval",
        "description": template.description,
        "entityType": "invoice",
        "contract": template.contract,
        "orgDefinition": template.org,
    }
    missing = api.get("/api/templates/nothing", headers=_as(keys["clerk"]))
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "TEMPLATE_NOT_FOUND"


def _submitted(api: TestClient, key: str, acme: Any, total: int) -> Any:
    made = api.post(
        "/api/documents",
        headers=_as(key),
        json={"entity_type": "ap_invoice", "data": {"grand_total": total, "vendor_id": "v-1"}},
    )
    assert made.status_code == 201, made.json()
    doc_id = made.json()["id"]
    moved = api.post(
        f"/api/documents/{doc_id}/transitions", headers=_as(key), json={"gate": "submit"}
    )
    assert moved.status_code == 200, moved.json()
    return acme.documents.wait(doc_id)


def test_publish_then_roll_back_new_documents_follow_running_ones_stay(api, keys, acme, engine):
    ops, clerk = _as(keys["ops"]), _as(keys["clerk"])
    before = api.get("/api/definitions/ap_invoice/versions", headers=ops).json()
    first = next(v for v in before if v["current"])
    assert first["kind"] == "effective" and first["status"] == "published"
    assert first["envelopeVersion"] == 1 and first["hash"]
    # Publish without the contract: one approval by the reviewer, nothing else.
    single = copy.deepcopy(invoice_org())
    single["slots"][REVIEW] = {
        "nodes": [
            {
                "id": "usr:slot:review:by_reviewer",
                "type": "approval",
                "config": {"approvers": [{"user": "reviewer"}]},
            }
        ],
        "edges": [],
    }
    refused = api.post(
        "/api/definitions/ap_invoice/publish", headers=clerk, json={"orgDefinition": single}
    )
    assert refused.status_code == 403
    elsewhere = api.post(
        "/api/definitions/sales_order/publish", headers=ops, json={"orgDefinition": single}
    )
    assert elsewhere.status_code == 422
    published = api.post(
        "/api/definitions/ap_invoice/publish", headers=ops, json={"orgDefinition": single}
    )
    assert published.status_code == 201, published.json()
    second = published.json()["version_id"]
    running = _submitted(api, keys["clerk"], acme, 9000)
    assert running.workflow.version_id == second
    assert "usr:slot:review:by_reviewer" in running.workflow.current_nodes
    # Roll back to the first: a new version, current, recorded with who and what it restores.
    back = {"versionId": first["versionId"]}
    refused = api.post("/api/definitions/ap_invoice/rollback", headers=clerk, json=back)
    assert refused.status_code == 403
    rolled = api.post("/api/definitions/ap_invoice/rollback", headers=ops, json=back)
    assert rolled.status_code == 201, rolled.json()
    third = rolled.json()["version_id"]
    assert third not in (first["versionId"], second) and rolled.json()["status"] == "published"
    after = api.get("/api/definitions/ap_invoice/versions", headers=ops).json()
    assert after[0]["versionId"] == third and after[0]["current"] is True
    assert after[0]["rollbackOf"] == first["versionId"]
    assert after[0]["createdBy"] == "service:ops"
    assert [v["versionId"] for v in after if v["current"]] == [third]
    builder = api.get("/api/definitions/ap_invoice/builder", headers=ops).json()
    assert builder["definition"] == _stored(invoice_org()) and builder["currentVersionId"] == third
    # The next invoice follows the restored definition; the running one stays on its own.
    following = _submitted(api, keys["clerk"], acme, 9000)
    assert following.workflow.version_id == third
    assert "usr:slot:review:review" in following.workflow.current_nodes
    still = acme.documents.get(running.id)
    assert still.workflow.version_id == second
    assert "usr:slot:review:by_reviewer" in still.workflow.current_nodes
    # Rolling back to what is current changes nothing; a draft, or an unknown id, is refused.
    again = api.post("/api/definitions/ap_invoice/rollback", headers=ops, json={"versionId": third})
    assert again.status_code == 201 and again.json()["status"] == "verified"
    draft = api.post("/api/definitions/drafts", headers=ops, json=single).json()["version_id"]
    not_published = api.post(
        "/api/definitions/ap_invoice/rollback", headers=ops, json={"versionId": draft}
    )
    assert not_published.status_code == 409
    assert not_published.json()["error"]["code"] == "DEFINITION_ROLLBACK_INVALID"
    unknown = api.post(
        "/api/definitions/ap_invoice/rollback", headers=ops, json={"versionId": "wf_ver_nope"}
    )
    assert unknown.status_code == 404
    other = api.post(
        "/api/definitions/sales_order/rollback", headers=ops, json={"versionId": second}
    )
    assert other.status_code == 404
    # Another org sees none of it.
    globex = api.get("/api/definitions/ap_invoice/versions", headers=_as(keys["globex"]))
    assert globex.status_code == 200 and globex.json() == []


def test_a_failing_publish_is_the_compilers_refusal(api, keys):
    cycle = copy.deepcopy(invoice_org())
    cycle["slots"][REVIEW]["edges"].append(
        {
            "id": "back",
            "sourceNodeId": "usr:slot:review:review",
            "targetNodeId": "usr:slot:review:fast_lane",
        }
    )
    body = {"orgDefinition": cycle}
    refused = api.post("/api/definitions/ap_invoice/publish", headers=_as(keys["ops"]), json=body)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "WORKFLOW_CYCLE"


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def _sign_in(api: TestClient, key: str) -> None:
    token = _csrf(api.get("/sign-in").text)
    answer = api.post("/sign-in", data={"key": key, "csrf": token, "next": "/"})
    assert answer.status_code == 303


def test_the_builder_page_and_its_calls_with_the_session(api, keys):
    _sign_in(api, keys["ops"])
    listing = api.get("/definitions").text
    assert 'href="/definitions/ap_invoice/builder"' in listing and "Edit workflow" in listing
    page = api.get("/definitions/ap_invoice/builder")
    assert page.status_code == 200
    root = re.search(r'<div id="builder-root"([^>]*)>', page.text)
    assert root, page.text
    attributes = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', root.group(1)))
    assert attributes["entity-type"] == "ap_invoice" and attributes["api-base"] == ""
    assert attributes["can-edit"] == "true"
    assert '<script type="module" src="/static/builder/builder.js">' in page.text
    assert 'href="/static/builder/builder.css"' in page.text
    assert api.get("/static/builder/builder.js").status_code == 200
    token = attributes["csrf"]
    # The page's calls: the session cookie with the CSRF token in X-CSRF-Token.
    read = api.get("/api/definitions/ap_invoice/builder", headers={"X-CSRF-Token": token})
    assert read.status_code == 200 and read.json()["canEdit"] is True
    compiled = api.post(
        "/api/definitions/compile",
        headers={"X-CSRF-Token": token},
        json={"orgDefinition": invoice_org()},
    )
    assert compiled.status_code == 200 and compiled.json()["ok"] is True
    # The cookie alone, or with another token, signs nothing in.
    for headers in ({}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": ""}):
        refused = api.get("/api/definitions/ap_invoice/builder", headers=headers)
        assert refused.status_code == 401, headers
    # An unknown entity type is the error page; a clerk sees no edit link, and a page that
    # says it may not edit.
    assert api.get("/definitions/nothing/builder").status_code == 404
    api.post("/sign-out", data={"csrf": token})
    assert api.get("/definitions/ap_invoice/builder").status_code == 303  # to sign in
    assert api.get("/api/health", headers={"X-CSRF-Token": token}).status_code == 401
    _sign_in(api, keys["clerk"])
    assert "Edit workflow" not in api.get("/definitions").text
    page = api.get("/definitions/ap_invoice/builder").text
    assert 'data-can-edit="false"' in page
