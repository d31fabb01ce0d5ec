"""A mutation wakes the documents engine (NOTIFY charter_events) only while an engine
sleeps: an engine asks to sleep (charter.engine_sleeps) and holds the 'engine' lock while it
does; a transaction writing events while no engine sleeps holds that lock shared, so no
engine can start sleeping before its events are committed and seen."""

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


def _sleeps(engine: psycopg.Connection) -> str:
    return engine.execute("SELECT charter.engine_sleeps()").fetchone()[0]


def _pending(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT document_id FROM charter.document_events"
        " WHERE status = 'pending' AND event_type = 'on_mutation' ORDER BY document_id"
    ).fetchall()
    return [r[0] for r in rows]


def test_a_mutation_notifies_its_org_while_an_engine_sleeps_and_not_once_it_woke(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with (
        psycopg.connect(db_url, autocommit=True) as listener,
        psycopg.connect(db_url, autocommit=True) as engine,
        psycopg.connect(db_url, autocommit=True) as conn,
    ):
        listener.execute("LISTEN charter_events")
        _update(conn, doc.id, 1)
        assert _notes(listener) == []  # no engine sleeps: nobody to wake
        assert _sleeps(engine) == "asleep"
        _update(conn, doc.id, 2)
        assert _notes(listener) == [("charter_events", "acme")]
        engine.execute("SELECT charter.engine_wakes()")
        _update(conn, doc.id, 3)
        assert _notes(listener) == []
        assert acme.documents.get(doc.id).data["grand_total"] == 3


def test_an_engine_cannot_sleep_while_a_writer_that_will_not_notify_is_open(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with (
        psycopg.connect(db_url, autocommit=True) as listener,
        psycopg.connect(db_url, autocommit=True) as engine,
        psycopg.connect(db_url, autocommit=True) as other,
        psycopg.connect(db_url) as writer,
    ):
        listener.execute("LISTEN charter_events")
        _update(writer, doc.id, 1)  # holds the lock shared until it ends
        assert _sleeps(engine) == "writing"
        assert _sleeps(other) == "writing"
        writer.commit()
        assert _notes(listener) == []
        # Told 'writing', an engine holds nothing (its own shared lock would not stop
        # itself, but would stop another): another one may sleep now, and the look it takes
        # first finds the event that was not notified.
        assert _sleeps(other) == "asleep"
        assert doc.id in _pending(other)
        assert _sleeps(engine) == "watched"


def test_a_second_engine_is_watched_by_the_sleeping_one(acme, db_url):
    doc = acme.documents.create("invoice", {}, actor="u-1")
    with (
        psycopg.connect(db_url, autocommit=True) as listener,
        psycopg.connect(db_url, autocommit=True) as first,
        psycopg.connect(db_url, autocommit=True) as second,
        psycopg.connect(db_url, autocommit=True) as conn,
    ):
        listener.execute("LISTEN charter_events")
        assert _sleeps(first) == "asleep"
        assert _sleeps(second) == "watched"
        _update(conn, doc.id, 1)
        assert _notes(listener) == [("charter_events", "acme")]
    # A sleeping engine whose connection ends lets go of the lock.
    with psycopg.connect(db_url, autocommit=True) as engine:
        assert _sleeps(engine) == "asleep"


def test_every_org_is_woken_while_an_engine_sleeps(acme, db_url):
    with (
        psycopg.connect(db_url, autocommit=True) as listener,
        psycopg.connect(db_url, autocommit=True) as engine,
        psycopg.connect(db_url) as a,
        psycopg.connect(db_url) as b,
    ):
        listener.execute("LISTEN charter_events")
        assert _sleeps(engine) == "asleep"
        a.execute("SELECT charter._wake_engine('acme')")
        b.execute("SELECT charter._wake_engine('globex')")
        b.commit()
        assert _notes(listener) == [("charter_events", "globex")]
        a.commit()
        assert _notes(listener) == [("charter_events", "acme")]
