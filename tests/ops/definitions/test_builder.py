"""The workflow builder's operations through the client (sync and async): what it reads,
compiling with every problem located, expression checks, publishing on the stored
contract, the version history, and rollback, also across a rebase (the org goes back to
the envelope version the restored definition names)."""

from __future__ import annotations

import asyncio
import copy
import threading

import pytest

from charter import AsyncClient
from charter.cli import main
from charter.errors import (
    ContractError,
    DefinitionNotFoundError,
    DefinitionRollbackInvalidError,
    EntityTypeUnknownError,
)
from tests import runtime_definitions as defs

NODES = [("x", "script", {"expression": "entity.code == 'a'", "assignTo": "context.x"})]


def test_builder_compile_check_and_publish_through_the_client(acme):
    memo = defs.contract("memo", {"code": "string"})
    acme.definitions.publish(memo)
    found = acme.definitions.builder("memo")
    assert found["definition"] is None and found["currentVersionId"] is None
    assert found["fields"] == {"code": "string"} and found["canEdit"] is True
    org = defs.org_definition("memo", NODES, [])
    compiled = acme.definitions.compile(org)
    assert compiled["ok"] is True
    added = [n["id"] for n in compiled["diff"]["slots"]["slot:work"]["addedNodes"]]
    assert "usr:slot:work:x" in added
    broken = copy.deepcopy(org)
    broken["slots"]["slot:work"]["nodes"][0]["config"]["expression"] = "entity.cod == 'a'"
    [problem] = acme.definitions.compile(broken)["errors"]
    assert problem["nodeId"] == "usr:slot:work:x" and problem["caret"] == 0
    assert acme.definitions.check_expression("memo", "entity.code", "script") == {
        "ok": True,
        "type": "string",
    }
    with pytest.raises(ContractError):
        acme.definitions.publish_definition(broken)
    published = acme.definitions.publish_definition(org)
    assert acme.definitions.current("memo").version_id == published.version_id
    assert acme.definitions.builder("memo")["currentVersionId"] == published.version_id
    with pytest.raises(EntityTypeUnknownError):
        acme.definitions.builder("nothing")


def test_rollback_goes_back_to_the_envelope_version_the_definition_names(acme):
    v1 = defs.contract("memo", {"code": "string"})
    acme.definitions.publish(v1)
    first = acme.definitions.publish(v1, defs.org_definition("memo", NODES, []))
    v2 = defs.contract("memo", {"code": "string", "priority": "number"})
    v2["version"] = 2
    acme.definitions.publish(v2)
    rebased = acme.definitions.rebase("memo")
    assert rebased.envelope_version == 2
    restored = acme.definitions.rollback("memo", first.version_id, actor="admin")
    assert restored.status == "published" and restored.version_id != first.version_id
    now = acme.definitions.current("memo")
    assert now.version_id == restored.version_id and now.envelope_version == 1
    listed = acme.definitions.versions("memo")
    assert listed[0]["versionId"] == restored.version_id and listed[0]["current"]
    assert listed[0]["rollbackOf"] == first.version_id and listed[0]["createdBy"] == "admin"
    assert {v["kind"] for v in listed} == {"effective", "org_patch"}
    # The org definition's own id works too; a draft does not, nor another org's id.
    patch = next(v for v in listed if v["kind"] == "org_patch" and v["status"] == "published")
    assert acme.definitions.rollback("memo", patch["versionId"]).status in ("published", "verified")
    draft = acme.definitions.save_draft(defs.org_definition("memo", NODES, []))
    with pytest.raises(DefinitionRollbackInvalidError):
        acme.definitions.rollback("memo", draft.version_id)
    with pytest.raises(DefinitionNotFoundError):
        acme.definitions.rollback("memo", "wf_ver_nope")


def test_the_async_client_has_the_same_builder_calls(acme, db_url):
    acme.definitions.publish(defs.contract("memo", {"code": "string"}))

    async def calls() -> None:
        async with AsyncClient(db_url, org_id="acme") as client:
            assert (await client.definitions.builder("memo"))["entityType"] == "memo"
            checked = await client.definitions.check_expression("memo", "entity.code >", "edge")
            assert checked["ok"] is False and checked["error"]["caret"] == 13
            org = defs.org_definition("memo", NODES, [])
            assert (await client.definitions.compile(org))["ok"] is True
            published = await client.definitions.publish_definition(org)
            listed = await client.definitions.versions("memo")
            assert [v["versionId"] for v in listed if v["current"]] == [published.version_id]

    asyncio.run(calls())


def test_the_cli_lists_versions_and_rolls_back(acme, db_url, capsys):
    memo = defs.contract("memo", {"code": "string"})
    acme.definitions.publish(memo)
    first = acme.definitions.publish(memo, defs.org_definition("memo", NODES, []))
    other = [("y", "script", {"expression": "true", "assignTo": "context.y"})]
    second = acme.definitions.publish(memo, defs.org_definition("memo", other, []))
    capsys.readouterr()
    assert main(["--database-url", db_url, "versions", "memo", "--org", "acme"]) == 0
    listed = capsys.readouterr().out
    assert f"{second.version_id}" in listed and "(current)" in listed
    assert first.version_id in listed
    args = ["--database-url", db_url, "rollback", "memo", first.version_id, "--org", "acme"]
    assert main(args) == 0
    assert f"restoring {first.version_id}" in capsys.readouterr().out
    now = acme.definitions.current("memo")
    assert now.version_id not in (first.version_id, second.version_id)
    assert acme.definitions.versions("memo")[0]["rollbackOf"] == first.version_id


def test_racing_rollbacks_restore_the_version_once(acme):
    memo = defs.contract("memo", {"code": "string"})
    first = acme.definitions.publish(memo, defs.org_definition("memo", NODES, []))
    other = [("y", "script", {"expression": "entity.code == 'b'", "assignTo": "context.y"})]
    acme.definitions.publish(memo, defs.org_definition("memo", other, []))
    start = threading.Barrier(4)
    outcomes: list[str] = []

    def roll_back() -> None:
        start.wait()
        outcomes.append(acme.definitions.rollback("memo", first.version_id, actor="admin").status)

    threads = [threading.Thread(target=roll_back) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["published", "verified", "verified", "verified"], outcomes
    rolled = [v for v in acme.definitions.versions("memo") if v.get("rollbackOf")]
    assert len(rolled) == 1 and rolled[0]["current"]
    assert acme.definitions.current("memo").version_id == rolled[0]["versionId"]
