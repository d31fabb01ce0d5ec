"""An amendment supersedes its original: the original moves to the contract's state amended,
or is frozen where there is none, and no change reaches it afterwards (DOCUMENT_AMENDED,
naming the amendment) — also when the change races the amendment."""

from __future__ import annotations

import asyncio
import threading

import psycopg
import pytest

from charter import AsyncClient, Client
from charter.errors import DocumentAmendedError, DocumentNotFoundError
from charter.ops.documents import Document
from tests.ops.documents.conftest import counts, invoice_contract


def _active(docs, data=None, entity_type="invoice"):
    doc = docs.create(entity_type, data or {"grand_total": 100, "vendor_id": "v-7"}, actor="u-1")
    docs.transition(doc.id, "submit", actor="u-1")
    return docs.transition(doc.id, "approve", actor="u-2", to="active")


def _without_amended_state():
    """The invoice contract as a credit note whose lifecycle has no state amended."""
    contract = invoice_contract()
    contract["entityType"] = "credit_note"
    contract["states"] = [s for s in contract["states"] if s["id"] != "amended"]
    contract["transitions"] = [
        t for t in contract["transitions"] if "amended" not in (t["from"], t["to"])
    ]
    contract["slots"] = [s for s in contract["slots"] if "amended" not in s["entryNodeId"]]
    contract["actions"] = [{"actionType": "credit_note.post", "fields": ["gl_batch"]}]
    contract["policies"] = {
        "*": {"rule": "true"},
        "approve": {"rule": "org.approvers contains actor.id"},
    }
    return contract


def _refusals(docs, original_id, db_url):
    """Every kind of change of the original, each refused with nothing written."""
    before = counts(db_url)
    tries = [
        lambda: docs.mutate(original_id, "invoice.post", {"gl_batch": "B-9"}, actor="u-3"),
        lambda: docs.update(original_id, {"note": "paid"}, actor="u-1"),
        lambda: docs.transition(original_id, "submit", actor="u-1"),
        lambda: docs.amend(original_id, {"grand_total": 1}, actor="u-1"),
    ]
    errors = []
    for attempt in tries:
        with pytest.raises(DocumentAmendedError) as caught:
            attempt()
        errors.append(caught.value)
    assert counts(db_url) == before
    return errors


def test_the_original_moves_to_amended_and_refuses_every_change(acme, db_url):
    docs = acme.documents
    original = _active(docs)
    new = docs.amend(original.id, {"grand_total": 90}, actor="u-1", reason="credit")

    superseded = docs.get(original.id)
    assert (superseded.state, superseded.version) == ("amended", original.version + 1)
    assert superseded.data == original.data and superseded.amended_by == new.id
    assert docs.get(original.id, version=original.version).state == "active"
    moved = docs.history(original.id)[-1]
    assert (moved.action, moved.actor, moved.run_as, moved.via, moved.reason) == (
        "amended", "u-1", "system", "system", "credit",
    )  # fmt: skip
    assert moved.version == superseded.version
    assert moved.changes == {
        "$amendedBy": new.id,
        "$state": {"from": "active", "to": "amended"},
    }
    for error in _refusals(docs, original.id, db_url):
        assert error.code == "DOCUMENT_AMENDED"
        assert f"amended by '{new.id}'" in error.message
        assert f"Work on the amendment '{new.id}' instead" in error.message
    assert docs.get(original.id).version == superseded.version
    # The amendment itself lives on.
    assert docs.update(new.id, {"note": "credit"}, actor="u-1").version == 2


def test_without_an_amended_state_the_original_is_frozen_where_it_is(acme, db_url):
    acme.definitions.publish(_without_amended_state())
    docs = acme.documents
    original = _active(docs, entity_type="credit_note")
    new = docs.amend(original.id, {"grand_total": 90}, actor="u-1", reason="typo")

    frozen = docs.get(original.id)
    assert (frozen.state, frozen.version, frozen.amended_by) == ("active", original.version, new.id)
    row = docs.history(original.id)[-1]
    assert (row.action, row.actor, row.via, row.reason, row.version) == (
        "amended", "u-1", "system", "typo", original.version,
    )  # fmt: skip
    assert row.changes == {"$amendedBy": new.id, "$frozen": True}
    before = counts(db_url)
    for change in (
        lambda: docs.mutate(original.id, "credit_note.post", {"gl_batch": "B-1"}, actor="u-1"),
        lambda: docs.amend(original.id, {"grand_total": 80}, actor="u-1"),
    ):
        with pytest.raises(DocumentAmendedError, match=f"amended by '{new.id}'"):
            change()
    assert counts(db_url) == before


def test_an_amendment_of_an_amendment_names_the_one_in_force(acme, db_url):
    docs = acme.documents
    first = _active(docs)
    second = docs.amend(first.id, {"grand_total": 90}, actor="u-1")
    docs.transition(second.id, "submit", actor="u-1")
    docs.transition(second.id, "approve", actor="u-2", to="active")
    third = docs.amend(second.id, {"grand_total": 80}, actor="u-1")
    assert third.amended_from == second.id and third.data["grand_total"] == 80
    assert docs.get(second.id).amended_by == third.id
    assert docs.get(first.id).amended_by == second.id  # each names its own amendment

    with pytest.raises(DocumentAmendedError) as caught:
        docs.mutate(first.id, "invoice.post", {"gl_batch": "B-1"}, actor="u-3")
    assert f"amended by '{second.id}'" in caught.value.message
    assert f"the amendment in force is '{third.id}'" in caught.value.message
    assert f"Work on the amendment '{third.id}' instead" in caught.value.message
    with pytest.raises(DocumentAmendedError, match=f"amended by '{third.id}': it no longer"):
        docs.amend(second.id, {"grand_total": 70}, actor="u-1")


def test_an_amendment_racing_changes_of_the_original_is_built_from_them_or_refuses_them(
    acme, db_url
):
    """From several threads: every post of the original either landed before the amendment
    (and the amendment carries it) or was refused naming the amendment. Never both an
    amendment and a later change of the original."""
    original = _active(acme.documents)
    posters, rounds = 6, 5
    start = threading.Barrier(posters + 1)
    landed: list[tuple[int, str]] = []
    refused: list[DocumentAmendedError] = []
    amended: list[Document] = []
    failures: list[BaseException] = []

    def post(n: int) -> None:
        with Client(db_url, org_id="acme") as client:
            start.wait()
            for r in range(rounds):
                batch = f"B-{n}-{r}"
                try:
                    doc = client.documents.mutate(
                        original.id, "invoice.post", {"gl_batch": batch}, actor="u-3"
                    )
                    landed.append((doc.version, batch))
                except DocumentAmendedError as exc:
                    refused.append(exc)
                except BaseException as exc:
                    failures.append(exc)

    def amend() -> None:
        with Client(db_url, org_id="acme") as client:
            start.wait()
            try:
                amended.append(client.documents.amend(original.id, {"note": "late"}, actor="u-1"))
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=post, args=(n,)) for n in range(posters)]
    threads.append(threading.Thread(target=amend))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    [amendment] = amended
    assert len(landed) + len(refused) == posters * rounds
    # The amendment was built from the last post that landed: none landed after it ...
    last = max(landed)[1] if landed else None
    assert amendment.data.get("gl_batch") == last
    superseded = acme.documents.get(original.id)
    assert superseded.amended_by == amendment.id
    assert all(version < superseded.version for version, _ in landed)
    with psycopg.connect(db_url) as conn:
        after = conn.execute(
            "SELECT version, action FROM charter.document_versions "
            "WHERE document_id = %s AND version >= %s ORDER BY version",
            (original.id, superseded.version),
        ).fetchall()
    assert after == [(superseded.version, "amended")]  # ... and nothing changed it since
    assert amendment.data == {**superseded.data, "note": "late"}
    for exc in refused:
        assert f"amended by '{amendment.id}'" in exc.message


def test_the_async_client_amends_is_refused_and_names_an_events_document(acme, db_url):
    original = _active(acme.documents)

    async def scenario():
        async with AsyncClient(db_url, org_id="acme") as client:
            new = await client.documents.amend(original.id, {"grand_total": 5}, actor="u-1")
            with pytest.raises(DocumentAmendedError, match=f"amended by '{new.id}'"):
                await client.documents.mutate(
                    original.id, "invoice.post", {"gl_batch": "B-1"}, actor="u-3"
                )
            sent = await client.events.send("payment:X", {}, document_id=original.id)
            with pytest.raises(DocumentNotFoundError, match="names document 'nope'"):
                await client.events.send("payment:X", {}, document_id="nope")
            return new, sent

    new, sent = asyncio.run(scenario())
    assert (sent.status, sent.matched) == ("kept", 0)
    with psycopg.connect(db_url) as conn:
        [(named,)] = conn.execute(
            "SELECT document_id FROM charter.inbound_events WHERE event_id = %s", (sent.event_id,)
        ).fetchall()
    assert named == original.id
    assert acme.documents.get(original.id).amended_by == new.id


def test_racing_amendments_of_one_document_make_one_amendment(acme, db_url):
    original = _active(acme.documents)
    racers = 5
    start = threading.Barrier(racers)
    made: list[Document] = []
    refused: list[DocumentAmendedError] = []

    def amend(n: int) -> None:
        with Client(db_url, org_id="acme") as client:
            start.wait()
            try:
                made.append(client.documents.amend(original.id, {"grand_total": n}, actor="u-1"))
            except DocumentAmendedError as exc:
                refused.append(exc)

    threads = [threading.Thread(target=amend, args=(n,)) for n in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [winner] = made
    assert len(refused) == racers - 1
    assert all(f"amended by '{winner.id}'" in exc.message for exc in refused)
    with psycopg.connect(db_url) as conn:
        amendments = conn.execute(
            "SELECT id FROM charter.documents WHERE amended_from = %s", (original.id,)
        ).fetchall()
    assert amendments == [(winner.id,)]
