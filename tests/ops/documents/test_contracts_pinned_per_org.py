"""Contracts are the platform's and each org is pinned to a version of them (issue #36): a
new contract version changes nothing for an org until the org publishes a definition on it
or rebases; only the owner's client, or a platform key, publishes a contract."""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any

import psycopg
import pytest

from charter import AsyncClient, Client
from charter.cli import main
from charter.db.store import Call, first_json, perform
from charter.errors import (
    ContractError,
    ContractVersionStaleError,
    DefinitionChangedError,
    DocumentInvalidError,
    PermissionDeniedError,
)
from charter.library.templates import TEMPLATES
from tests.ops.documents.conftest import invoice_contract


def _renamed_vendor(version: int) -> dict[str, Any]:
    """The invoice contract at ``version``, where vendor_id became supplier_id."""
    contract = invoice_contract()
    contract["version"] = version
    del contract["fields"]["vendor_id"]
    contract["fields"]["supplier_id"] = "string"
    contract["display"] = {"title": "Invoice from {supplier_id}", "summary": ["supplier_id"]}
    return contract


def _org_definition(version: int = 1) -> dict[str, Any]:
    definition = copy.deepcopy(TEMPLATES["invoice_approval"].org)
    definition["baseRef"]["envelopeVersion"] = version
    return definition


@pytest.fixture
def globex(acme, db_url):
    with Client(db_url, org_id="globex") as client:
        client.directory.put_user("g-1", roles=["clerk"])
        yield client


def _contract_version(db_url: str, version_id: str) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT (contract->>'version')::int FROM charter.workflow_versions WHERE id = %s",
            (version_id,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_new_contract_version_changes_nothing_for_an_org_until_it_rebases(acme, globex, db_url):
    before = globex.documents.create("invoice", {"vendor_id": "v-1"}, actor="g-1")
    assert acme.definitions.publish(_renamed_vendor(2)).status == "published"
    # globex keeps validating against version 1: its creates with vendor_id still pass.
    kept = globex.documents.create("invoice", {"vendor_id": "v-2"}, actor="g-1")
    assert kept.contract_version_id == before.contract_version_id
    with pytest.raises(DocumentInvalidError, match="supplier_id"):
        globex.documents.create("invoice", {"supplier_id": "s-1"}, actor="g-1")
    on = globex.definitions.current("invoice")
    assert (on.kind, on.envelope_version, on.latest_envelope_version) == ("envelope", 1, 2)
    # An org that never used the type starts on the newest.
    with Client(db_url, org_id="initech") as initech:
        assert initech.definitions.current("invoice").envelope_version == 2
    # The rebase moves globex: new documents validate against version 2; the old ones stay
    # on theirs (an update with vendor_id still passes).
    moved = globex.definitions.rebase("invoice")
    assert (moved.status, moved.kind, moved.envelope_version) == ("rebased", "envelope", 2)
    assert globex.definitions.rebase("invoice").status == "verified"  # nothing left to move
    with pytest.raises(DocumentInvalidError, match="vendor_id"):
        globex.documents.create("invoice", {"vendor_id": "v-3"}, actor="g-1")
    after = globex.documents.create("invoice", {"supplier_id": "s-1"}, actor="g-1")
    assert _contract_version(db_url, after.contract_version_id) == 2
    assert globex.documents.update(before.id, {"vendor_id": "v-9"}, actor="g-1").version == 2


def test_an_org_moves_when_it_publishes_a_definition_on_the_new_version(acme, db_url):
    acme.definitions.publish(invoice_contract(), _org_definition(1))
    acme.definitions.publish(_renamed_vendor(2))
    # An org may keep publishing on the version it is on while a newer one exists.
    again = acme.definitions.publish(invoice_contract(), _org_definition(1))
    assert again.status == "verified" and again.envelope_version == 1
    doc = acme.documents.create("invoice", {"vendor_id": "v-1"}, actor="u-1")
    assert _contract_version(db_url, doc.contract_version_id) == 1
    made = acme.definitions.publish(_renamed_vendor(2), _org_definition(2))
    assert (made.status, made.envelope_version) == ("published", 2)
    current = acme.definitions.current("invoice")
    assert (current.version_id, current.envelope_version) == (made.version_id, 2)
    fresh = acme.documents.create("invoice", {"supplier_id": "s-1"}, actor="u-1")
    assert _contract_version(db_url, fresh.contract_version_id) == 2
    # Archiving it brings the org back to the definition before, and its version.
    acme.definitions.archive(made.version_id)
    back = acme.definitions.current("invoice")
    assert (back.version_id, back.envelope_version) == (again.version_id, 1)
    acme.documents.create("invoice", {"vendor_id": "v-2"}, actor="u-1")


def test_a_rebase_whose_patch_no_longer_fits_is_refused_and_changes_nothing(acme, db_url):
    made = acme.definitions.publish(invoice_contract(), _org_definition(1))
    without_slot = invoice_contract()
    without_slot["version"] = 2
    without_slot["slots"] = [
        s for s in without_slot["slots"] if s["slotId"] != "slot:submitted_to_approved"
    ]
    acme.definitions.publish(without_slot)
    with pytest.raises(ContractError) as refused:
        acme.definitions.rebase("invoice")
    assert refused.value.code == "SLOT_UNKNOWN"
    current = acme.definitions.current("invoice")
    assert (current.version_id, current.envelope_version) == (made.version_id, 1)
    with psycopg.connect(db_url) as conn:
        versions = conn.execute(
            "SELECT count(*) FROM charter.workflow_versions WHERE workflow_slug LIKE '%:acme:%'"
        ).fetchone()
    # A version that fits again: the rebase recompiles the org's patch on it.
    acme.definitions.publish(_renamed_vendor(3))
    rebased = acme.definitions.rebase("invoice")
    assert (rebased.status, rebased.kind, rebased.envelope_version) == ("rebased", "effective", 3)
    assert rebased.version_id != made.version_id
    assert any(node.startswith("usr:") for node in rebased.compiled["nodes"])
    assert rebased.compiled["envelopeVersion"] == 3
    with psycopg.connect(db_url) as conn:
        grown = conn.execute(
            "SELECT count(*) FROM charter.workflow_versions WHERE workflow_slug LIKE '%:acme:%'"
        ).fetchone()
    assert versions is not None and grown is not None and grown[0] == versions[0] + 2


def test_only_the_platform_publishes_contracts_whatever_the_database_role(acme, db_url):
    # The owner's client acting for an org (as charter serve does for an org's key) may find
    # a published contract and publish the org's definitions, but not a new contract.
    as_org = acme.for_org("acme")
    assert as_org.definitions.publish(invoice_contract()).status == "verified"
    assert as_org.definitions.publish(invoice_contract(), _org_definition()).kind == "effective"
    with pytest.raises(PermissionDeniedError, match="platform key"):
        as_org.definitions.publish(_renamed_vendor(2))
    assert acme.definitions.current("invoice").latest_envelope_version == 1  # nothing changed

    async def async_twin() -> None:
        async with AsyncClient(db_url, org_id="acme") as client:
            with pytest.raises(PermissionDeniedError, match="platform act"):
                await client.for_org("globex").definitions.publish(_renamed_vendor(2))
            made = await client.for_org("globex", platform=True).definitions.publish(
                _renamed_vendor(2)
            )
            assert (made.status, made.envelope_version) == ("published", 2)

    asyncio.run(async_twin())
    # A version is published once: a changed contract needs a higher one.
    changed = _renamed_vendor(2)
    changed["fields"]["memo"] = "string"
    older = invoice_contract()
    older["policies"]["create"] = {"roles": ["clerk"]}
    for stale in (changed, older):
        with pytest.raises(ContractVersionStaleError, match="needs a version above 2"):
            acme.definitions.publish(stale)


def test_racing_first_creates_of_an_org_and_a_new_version_leave_the_org_on_one_version(
    acme, db_url
):
    with Client(db_url, org_id="globex") as globex:
        globex.directory.put_user("g-1", roles=["clerk"])
        start = threading.Barrier(9)
        made: list[str] = []
        errors: list[BaseException] = []

        def create() -> None:
            start.wait()
            try:
                doc = globex.documents.create("invoice", {"grand_total": 1}, actor="g-1")
                made.append(doc.contract_version_id)
            except BaseException as exc:  # reported below
                errors.append(exc)

        def publish() -> None:
            start.wait()
            acme.definitions.publish(_renamed_vendor(2))

        threads = [threading.Thread(target=create) for _ in range(8)]
        threads.append(threading.Thread(target=publish))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and len(made) == 8
        assert len(set(made)) == 1  # every document of the org on one contract version
        pinned = globex.definitions.current("invoice").envelope_version
        assert _contract_version(db_url, made[0]) == pinned
        later = globex.documents.create("invoice", {"grand_total": 2}, actor="g-1")
        assert later.contract_version_id == made[0]


def test_racing_rebases_move_the_org_once(acme, db_url):
    acme.definitions.publish(invoice_contract(), _org_definition(1))
    acme.definitions.publish(_renamed_vendor(2))
    start = threading.Barrier(4)
    outcomes: list[str] = []

    def rebase() -> None:
        start.wait()
        try:
            outcomes.append(acme.definitions.rebase("invoice").status)
        except DefinitionChangedError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=rebase) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("rebased") == 1, outcomes
    assert set(outcomes) <= {"rebased", "verified", "DEFINITION_CHANGED"}
    with psycopg.connect(db_url) as conn:
        effective = conn.execute(
            "SELECT count(*) FROM charter.workflow_versions"
            " WHERE workflow_slug = 'effective:acme:invoice'"
        ).fetchone()
    assert effective is not None and effective[0] == 2  # the first, and one on version 2
    assert acme.definitions.current("invoice").envelope_version == 2


def test_a_rebase_of_a_definition_that_changed_meanwhile_changes_nothing(acme, db_url):
    made = acme.definitions.publish(invoice_contract(), _org_definition(1))
    acme.definitions.publish(_renamed_vendor(2))
    stale = Call(
        "rebase_definition",
        {"org_id": "acme", "entity_type": "invoice", "from_version_id": None,
         "envelope_version": 2, "definition": None, "compiled": None},
        first_json,
    )  # fmt: skip
    with (
        psycopg.connect(db_url, autocommit=True) as conn,
        pytest.raises(DefinitionChangedError, match="changed while it was rebased"),
    ):
        perform(conn, stale)
    current = acme.definitions.current("invoice")
    assert (current.version_id, current.envelope_version) == (made.version_id, 1)


def test_charter_rebase_and_platform_keys_on_the_command_line(acme, db_url, capsys):
    acme.documents.create("invoice", {"vendor_id": "v-1"}, actor="u-1")
    acme.definitions.publish(_renamed_vendor(2))
    capsys.readouterr()
    assert main(["--database-url", db_url, "rebase", "invoice", "--org", "acme"]) == 0
    assert "invoice: rebased for org acme, on contract version 2" in capsys.readouterr().out
    # An org's key names its org and actor; a platform key has defaults for both.
    assert main(["--database-url", db_url, "keys", "create", "--actor", "service:x"]) == 1
    assert "--org ORG and --actor" in capsys.readouterr().err
    assert main(["--database-url", db_url, "keys", "create", "--platform", "--actor", "u-1"]) == 1
    assert "API_KEY_INVALID" in capsys.readouterr().err
    assert main(["--database-url", db_url, "keys", "create", "--platform"]) == 0
    assert main(["--database-url", db_url, "keys", "list", "--json"]) == 0
    listed = capsys.readouterr().out
    assert '"platform": true' in listed and '"actor": "service:platform"' in listed
