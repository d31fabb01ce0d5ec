"""A mutation wakes the documents engine (NOTIFY charter_events) unless another
transaction of its org already will: one notifying commit at a time, not one per mutation."""

from __future__ import annotations

import psycopg


def _notes(listener: psycopg.Connection) -> list[tuple[str, str]]:
    listener.execute("SELECT 1")  # notifications arrive with the next round trip
    return [(n.channel, n.payload) for n in listener.notifies(timeout=0.2)]


def _update(conn: psycopg.Connection, document_id: str, total: int) -> None:
    conn.execute(
        "SELECT charter.mutate('acme', 'update', %s, jsonb_build_object('grand_total', %s), 'u-1')",
        (document_id, total),
    )


def test_a_mutation_notifies_its_org(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with psycopg.connect(db_url, autocommit=True) as listener:
        listener.execute("LISTEN charter_events")
        with psycopg.connect(db_url, autocommit=True) as conn:
            _update(conn, doc.id, 5)
        assert _notes(listener) == [("charter_events", "acme")]


def test_concurrent_mutations_of_one_org_send_one_notify_and_lose_no_event(acme, db_url):
    first = acme.documents.create("invoice", {}, actor="u-1")
    second = acme.documents.create("invoice", {}, actor="u-1")
    with (
        psycopg.connect(db_url, autocommit=True) as listener,
        psycopg.connect(db_url) as a,
        psycopg.connect(db_url) as b,
    ):
        listener.execute("LISTEN charter_events")
        _update(a, first.id, 1)  # a holds the org's wake-up lock until it ends
        _update(b, second.id, 2)  # b skips its NOTIFY: a's commit wakes the engine
        b.commit()
        assert _notes(listener) == []
        a.commit()
        assert _notes(listener) == [("charter_events", "acme")]
        # The engine, once woken, finds both events.
        pending = listener.execute(
            "SELECT document_id FROM charter.document_events"
            " WHERE status = 'pending' AND event_type = 'on_mutation' ORDER BY document_id"
        ).fetchall()
        assert sorted(r[0] for r in pending) == sorted([first.id, second.id])


def test_a_skipped_notify_does_not_hold_back_another_org(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with psycopg.connect(db_url, autocommit=True) as listener, psycopg.connect(db_url) as a:
        listener.execute("LISTEN charter_events")
        _update(a, doc.id, 1)
        with psycopg.connect(db_url, autocommit=True) as other:
            other.execute("SELECT charter._wake_engine('globex')")
        assert _notes(listener) == [("charter_events", "globex")]
        a.rollback()
        assert _notes(listener) == []
