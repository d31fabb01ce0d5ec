"""The active workflow instance in the write path: its current node's edit window holds in
mutate() with no engine running, one active instance per document, amendments end it."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from charter.errors import WorkflowEditLockedError


def _start_instance(db_url, client, document, nodes):
    """What the engine does when a document's workflow starts: one active instance."""
    version = client.definitions.current(document.entity_type)
    instance_id = str(uuid.uuid4())
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO charter.workflow_instances (id, org_id, entity_type, document_id,"
            " version_id, document_version, current_nodes) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                instance_id,
                document.org_id,
                document.entity_type,
                document.id,
                version.version_id,
                document.version,
                nodes,
            ),
        )
    return instance_id, version


def _instance(db_url, instance_id):
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT status, cancel_reason FROM charter.workflow_instances WHERE id = %s",
            (instance_id,),
        ).fetchone()


def test_the_instances_node_window_is_enforced_even_where_the_state_allows_edits(acme, db_url):
    docs = acme.documents
    doc = docs.create("invoice", {"grand_total": 1}, actor="u-1")  # draft: editable
    _, version = _start_instance(db_url, acme, doc, ["sys:end"])  # sys:end is locked
    assert version.compiled["editWindows"]["sys:end"] == "locked"
    with pytest.raises(WorkflowEditLockedError, match="at workflow node sys:end"):
        docs.update(doc.id, {"grand_total": 2}, actor="u-1")
    assert docs.get(doc.id).version == 1


def test_an_amend_only_node_forces_an_amendment_event(acme, db_url):
    docs = acme.documents
    doc = docs.create("invoice", {"grand_total": 1}, actor="u-1")
    _, version = _start_instance(db_url, acme, doc, ["sys:gate:submit"])
    assert version.compiled["editWindows"]["sys:gate:submit"] == "amend_only"
    docs.update(doc.id, {"grand_total": 2}, actor="u-1")
    with psycopg.connect(db_url) as conn:
        kinds = [
            row[0]
            for row in conn.execute(
                "SELECT event_type FROM charter.document_events WHERE document_id = %s ORDER BY id",
                (doc.id,),
            )
        ]
    assert kinds[-1] == "on_amendment"


def test_at_most_one_active_instance_per_document(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    _start_instance(db_url, acme, doc, [])
    with pytest.raises(psycopg.errors.UniqueViolation):
        _start_instance(db_url, acme, doc, [])


def test_amending_cancels_the_originals_active_instance(acme, db_url):
    docs = acme.documents
    doc = docs.transition(docs.create("invoice", {}, actor="u-1").id, "submit", actor="u-1")
    doc = docs.transition(doc.id, "approve", actor="u-2", to="active")
    instance_id, _ = _start_instance(db_url, acme, doc, ["sys:state:active"])
    new = docs.amend(doc.id, {"grand_total": 5}, actor="u-1")
    assert _instance(db_url, instance_id) == ("cancelled", "amended")
    _start_instance(db_url, acme, new, [])  # the new document may start its own


def test_an_update_that_waited_for_the_engine_judges_the_node_the_engine_left(acme, db_url):
    """The engine moves an instance under its document's lock. An update that waited for
    that lock must judge its edit window by the node the engine committed, not by the node
    it was at when the update began to wait."""
    docs = acme.documents
    doc = docs.create("invoice", {"grand_total": 1}, actor="u-1")  # draft: editable
    instance_id, _ = _start_instance(db_url, acme, doc, [])
    refused: list[BaseException] = []

    def update() -> None:
        try:
            docs.update(doc.id, {"grand_total": 2}, actor="u-1")
        except WorkflowEditLockedError as exc:
            refused.append(exc)

    with psycopg.connect(db_url) as engine:
        engine.execute(
            "SELECT 1 FROM charter.documents WHERE org_id = %s AND id = %s FOR UPDATE",
            (doc.org_id, doc.id),
        )
        xid = engine.execute("SELECT pg_current_xact_id()::xid::text").fetchone()[0]
        waiting = threading.Thread(target=update)
        waiting.start()
        with psycopg.connect(db_url, autocommit=True) as watcher:
            while not watcher.execute(  # until the update waits for the engine's lock
                "SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted"
                " AND locktype = 'transactionid' AND transactionid = %s::xid)",
                (xid,),
            ).fetchone()[0]:
                time.sleep(0.01)
        engine.execute(
            "UPDATE charter.workflow_instances SET current_nodes = '{sys:end}' WHERE id = %s",
            (instance_id,),
        )
        engine.commit()
        waiting.join(timeout=30)
    assert len(refused) == 1 and "sys:end" in str(refused[0])
    assert docs.get(doc.id).version == 1
