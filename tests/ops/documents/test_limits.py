"""Limits of what a document call takes, each refused with its code and nothing written: data
past the size limit (DOCUMENT_TOO_LARGE: 1 MiB, the database's charter.max_document_bytes
or the contract's maxDocumentBytes), checked in PostgreSQL for every caller and in the
client before sending; whole numbers past PostgreSQL's range (ARGUMENT_INVALID, naming the
parameter, never SCHEMA_NOT_CURRENT)."""

from __future__ import annotations

import asyncio
import json
import threading

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter import AsyncClient, Client
from charter.errors import ArgumentError, ContractError, DocumentTooLargeError
from tests.ops.documents.conftest import counts, invoice_contract

MIB = 1024 * 1024


def test_data_past_one_mebibyte_is_refused_by_the_database_for_every_caller(acme, db_url):
    before = counts(db_url)
    # SQL straight, no client to check first.
    with psycopg.connect(db_url) as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(
            "SELECT charter.mutate('acme', 'create', NULL, %s, 'u-1', 'invoice')",
            (Jsonb({"note": "x" * MIB}),),
        )
    assert refused.value.sqlstate == DocumentTooLargeError.sqlstate
    assert "1048576 bytes" in str(refused.value.diag.message_primary)
    assert counts(db_url) == before
    # Grown by changes each small enough for the client, the data is still measured whole.
    doc = acme.documents.create("invoice", {"note": "a" * (MIB // 3)}, actor="u-1")
    doc = acme.documents.update(doc.id, {"vendor_id": "b" * (MIB // 3)}, actor="u-1")
    before = counts(db_url)
    with pytest.raises(DocumentTooLargeError, match=r"database \(charter\.max_document_bytes\)"):
        acme.documents.update(doc.id, {"cost_center": "c" * (MIB // 3)}, actor="u-1")
    assert counts(db_url) == before
    # Shrinking it, or passing a gate, is fine.
    doc = acme.documents.update(doc.id, {"note": "short"}, actor="u-1")
    assert acme.documents.transition(doc.id, "submit", actor="u-1").state == "submitted"


def test_the_client_refuses_oversized_data_before_sending_it(acme, db_url, monkeypatch):
    before = counts(db_url)
    with pytest.raises(DocumentTooLargeError, match="CHARTER_MAX_DOCUMENT_BYTES"):
        acme.documents.create("invoice", {"note": "x" * (MIB + 1)}, actor="u-1")
    monkeypatch.setenv("CHARTER_MAX_DOCUMENT_BYTES", "1000")
    with pytest.raises(DocumentTooLargeError, match="CHARTER_MAX_DOCUMENT_BYTES"):
        acme.documents.create("invoice", {"note": "x" * 1001}, actor="u-1")
    doc = acme.documents.create("invoice", {"note": "x" * 900}, actor="u-1")
    with pytest.raises(DocumentTooLargeError, match="CHARTER_MAX_DOCUMENT_BYTES"):
        acme.documents.update(doc.id, {"note": "é" * 600}, actor="u-1")  # bytes, not characters

    async def scenario() -> None:
        async with AsyncClient(db_url, org_id="acme") as client:
            with pytest.raises(DocumentTooLargeError, match="CHARTER_MAX_DOCUMENT_BYTES"):
                await client.documents.amend(doc.id, {"note": "x" * 2000}, actor="u-1")

    asyncio.run(scenario())
    assert counts(db_url)[0] == before[0] + 1


def test_a_contract_sets_its_own_limit(acme, db_url):
    contract = invoice_contract()
    contract["entityType"] = "memo_note"
    contract["maxDocumentBytes"] = 2000
    acme.definitions.publish(contract)
    doc = acme.documents.create("memo_note", {"note": "x" * 1500}, actor="u-1")
    with pytest.raises(DocumentTooLargeError, match="maxDocumentBytes"):
        acme.documents.create("memo_note", {"note": "x" * 2500}, actor="u-1")
    with pytest.raises(DocumentTooLargeError, match="maxDocumentBytes"):
        acme.documents.update(doc.id, {"vendor_id": "v" * 600}, actor="u-1")
    contract["maxDocumentBytes"] = 0
    with pytest.raises(ContractError, match="maxDocumentBytes"):
        acme.definitions.publish(contract)


def test_the_databases_setting_sets_the_limit_and_a_session_cannot_raise_it(acme, db_url):
    dbname = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
    with psycopg.connect(db_url, autocommit=True) as owner:
        owner.execute(f"ALTER DATABASE \"{dbname}\" SET charter.max_document_bytes = '100000'")
    with Client(db_url, org_id="acme") as client:
        client.documents.create("invoice", {"note": "x" * 90_000}, actor="u-1")
        with pytest.raises(DocumentTooLargeError, match="100000 bytes"):
            client.documents.create("invoice", {"note": "x" * 110_000}, actor="u-1")
        # An amendment carries the original's data plus its changes: measured whole too.
        doc = client.documents.create("invoice", {"note": "x" * 60_000}, actor="u-1")
        doc = client.documents.transition(doc.id, "submit", actor="u-1")
        doc = client.documents.transition(doc.id, "approve", actor="u-2", to="active")
        with pytest.raises(DocumentTooLargeError, match="100000 bytes"):
            client.documents.amend(doc.id, {"vendor_id": "v" * 60_000}, actor="u-1")
        assert client.documents.get(doc.id).amended_by is None
    with psycopg.connect(db_url) as conn:
        conn.execute("SET charter.max_document_bytes = '99999999'")
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(
                "SELECT charter.mutate('acme', 'create', NULL, %s, 'u-1', 'invoice')",
                (Jsonb({"note": "x" * 110_000}),),
            )
        assert refused.value.sqlstate == DocumentTooLargeError.sqlstate


@pytest.mark.parametrize(
    "number",
    [2**31, -(2**31) - 1, 2**63, 2**70, 10**5000],
    ids=["int", "-int", "bigint", "2^70", "10^5000"],
)
def test_a_number_out_of_postgresqls_range_is_an_argument_error_naming_it(acme, number):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with pytest.raises(ArgumentError, match=r"^\[ARGUMENT_INVALID\] expected_version is out"):
        acme.documents.update(doc.id, {"note": 1}, actor="u-1", expected_version=number)
    with pytest.raises(ArgumentError, match="version is out of range"):
        acme.documents.get(doc.id, version=number)
    with pytest.raises(ArgumentError, match="entity_version is out of range"):
        acme.approvals.decide("no-such", "approved", actor="u-2", entity_version=number)
    if abs(number) >= 2**63:
        with pytest.raises(ArgumentError, match="ids is out of range"):
            acme.dead_letters.retry([1, number], actor="u-1")

    async def scenario() -> None:
        async with AsyncClient(acme.store.target.url, org_id="acme") as client:
            with pytest.raises(ArgumentError, match="expected_version is out of range"):
                await client.documents.update(doc.id, {}, actor="u-1", expected_version=number)

    asyncio.run(scenario())
    # Numbers inside a document's data are JSON (numeric in PostgreSQL): these fit.
    if abs(number) < 10**100:
        assert acme.documents.update(doc.id, {"note": number}, actor="u-1").data["note"] == number


def test_racing_changes_never_grow_a_document_past_the_limit(acme, db_url):
    # Each change fits on its own; any two together do not. The document's lock makes each
    # measure the data the other left: one is written, the rest are refused.
    doc = acme.documents.create("invoice", {"note": "n" * (MIB // 3)}, actor="u-1")
    fields = ["vendor_id", "cost_center", "gl_batch", "posted_at"]
    outcomes: list[object] = []

    def change(field: str) -> None:
        with Client(db_url, org_id="acme") as client:
            try:
                outcomes.append(client.documents.update(doc.id, {field: "x" * (MIB // 2)},
                                                        actor="u-1"))  # fmt: skip
            except DocumentTooLargeError as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=change, args=(field,)) for field in fields]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = [o for o in outcomes if not isinstance(o, DocumentTooLargeError)]
    assert len(outcomes) == 4 and len(written) == 1
    final = acme.documents.get(doc.id)
    assert final.version == 2 and len(json.dumps(final.data)) < MIB
