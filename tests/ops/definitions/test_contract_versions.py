"""Contract versions at run time (issue #36): running instances stay on the workflow they
started with when their org rebases; over HTTP only a platform key publishes a contract,
even on a server that runs as the schema's owner; the Definitions page says which envelope
version the org is on."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from charter.cli import main
from charter.demos.use_cases import USE_CASES
from charter.errors import DocumentInvalidError
from tests import runtime_definitions as defs


def test_running_instances_stay_on_their_version_when_the_org_rebases(acme, engine):
    nodes = [
        ("hold", "wait_event", {"eventKey": "memo:{entity.code}"}),
        ("after", "script", {"expression": "true", "assignTo": "context.after"}),
    ]
    v1 = defs.contract("memo", {"code": "string"})
    acme.definitions.publish(v1)
    org = defs.org_definition("memo", nodes, [("hold", "after", {})])
    first = acme.definitions.publish(v1, org)
    old = acme.documents.create("memo", {"code": "A"}, actor="sales")
    acme.documents.transition(old.id, "open", actor="sales")
    waiting = acme.documents.wait(old.id, timeout=20).workflow
    assert waiting is not None and waiting.version_id == first.version_id
    assert [w.kind for w in waiting.waiting_for] == ["event"]

    v2 = defs.contract("memo", {"code": "string", "priority": "number"})
    v2["version"] = 2
    acme.definitions.publish(v2)  # the platform's act: acme is still on version 1
    assert acme.definitions.current("memo").version_id == first.version_id
    rebased = acme.definitions.rebase("memo")
    assert rebased.envelope_version == 2 and rebased.version_id != first.version_id

    new = acme.documents.create("memo", {"code": "B", "priority": 1}, actor="sales")
    acme.documents.transition(new.id, "open", actor="sales")
    assert acme.documents.wait(new.id, timeout=20).workflow.version_id == rebased.version_id
    # The document that was there keeps its contract (version 1 has no priority), and its
    # running instance goes on with the workflow it started with.
    with pytest.raises(DocumentInvalidError, match="priority"):
        acme.documents.update(old.id, {"priority": 2}, actor="sales")
    acme.events.send("memo:A", {"ok": True})
    done = acme.documents.wait(old.id, timeout=20).workflow
    assert done.version_id == first.version_id and done.context["after"] is True


@pytest.fixture
def owner_site(db_url) -> Iterator[TestClient]:
    """The server on the schema's owner role, where the database would let anyone publish."""
    with TestClient(create_app(db_url), follow_redirects=False) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _platform_key(db_url: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["--database-url", db_url, "keys", "create", "--platform"]) == 0
    printed = capsys.readouterr().out
    assert "platform key" in printed and "service:platform" in printed
    found = re.search(r"chk_\w+", printed)
    assert found is not None
    return found.group(0)


def test_only_a_platform_key_publishes_a_contract_over_http(owner_site, keys, acme, db_url, capsys):
    contract, _ = copy.deepcopy(USE_CASES["A"])
    contract["version"] = 2
    org_admin = _as(keys["ops"])  # a service account of acme: an org's admin
    refused = owner_site.post("/api/definitions", headers=org_admin, json={"contract": contract})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "PERMISSION_DENIED"
    assert "platform key" in refused.json()["error"]["message"]
    current = owner_site.get("/api/definitions/ap_invoice/current", headers=org_admin).json()
    assert (current["envelope_version"], current["latest_envelope_version"]) == (1, 1)

    platform = _as(_platform_key(db_url, capsys))
    made = owner_site.post("/api/definitions", headers=platform, json={"contract": contract})
    assert made.status_code == 201 and made.json()["status"] == "published"
    # The org's key may find it published, and the org is still on version 1 until it moves.
    found = owner_site.post("/api/definitions", headers=org_admin, json={"contract": contract})
    assert found.status_code == 201 and found.json()["status"] == "verified"
    current = owner_site.get("/api/definitions/ap_invoice/current", headers=org_admin).json()
    assert (current["envelope_version"], current["latest_envelope_version"]) == (1, 2)
    clerk = _as(keys["clerk"])
    assert owner_site.post("/api/definitions/ap_invoice/rebase", headers=clerk).status_code == 403
    moved = owner_site.post("/api/definitions/ap_invoice/rebase", headers=org_admin)
    assert moved.status_code == 200 and moved.json()["status"] == "rebased"
    assert moved.json()["envelope_version"] == 2 and moved.json()["kind"] == "effective"


def _sign_in(site: TestClient, key: str) -> None:
    page = site.get("/sign-in").text
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    answer = site.post("/sign-in", data={"key": key, "csrf": token.group(1), "next": "/"})
    assert answer.status_code == 303


def test_the_definitions_page_says_which_envelope_version_the_org_is_on(owner_site, keys, acme):
    contract, _ = copy.deepcopy(USE_CASES["A"])
    contract["version"] = 2
    acme.definitions.publish(contract)
    _sign_in(owner_site, keys["ops"])
    page = owner_site.get("/definitions").text
    section = page[page.index('data-entity-type="ap_invoice"') :]
    section = section[: section.index("</section>")]
    assert "on envelope v1" in section and "v2 is published" in section
    acme.definitions.rebase("ap_invoice")
    page = owner_site.get("/definitions").text
    section = page[page.index('data-entity-type="ap_invoice"') :]
    section = section[: section.index("</section>")]
    assert "on envelope v2" in section and "is published" not in section
