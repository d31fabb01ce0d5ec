"""When the documents engine may sleep until ``NOTIFY charter_events``.

Transactions that write document events notify only while an engine sleeps
(``charter._wake_engine``), so that concurrent mutations do not commit one at a time behind
PostgreSQL's notify lock. An engine that found nothing to do therefore asks first
(``charter.engine_sleeps``): only once it holds the ``engine`` advisory lock, for the
session of a connection kept for that, do writers notify; it then looks for work once
more and sleeps, and lets go of the lock when it wakes.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import psycopg

from charter.db.connection import pool_conninfo
from charter.db.queries import query
from charter.db.store import AsyncStore

# asleep: this engine holds the lock (look once more, then sleep until notified or the
# poll); writing: event writers are open and will not notify (look again soon); watched:
# another engine sleeps holding the lock, and the NOTIFY that wakes it wakes this one too.
SleepState = Literal["asleep", "writing", "watched"]


class Sleeper(Protocol):
    asleep: bool

    async def try_sleep(self) -> SleepState: ...

    async def woke(self) -> None: ...

    async def close(self) -> None: ...


class EngineSleep:
    """The engine's hold on the ``engine`` lock, on a connection of its own (a session
    lock must outlive the pool's transactions; a broken connection lets go of it)."""

    def __init__(self, store: AsyncStore) -> None:
        self._store = store
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self.asleep = False

    async def try_sleep(self) -> SleepState:
        try:
            conn = await self._connection()
            row = await (await conn.execute(query("engine_sleeps"))).fetchone()
        except psycopg.Error:
            await self.close()
            raise
        state: SleepState = row[0] if row else "writing"
        self.asleep = state == "asleep"
        return state

    async def woke(self) -> None:
        if not self.asleep:
            return
        self.asleep = False
        try:
            assert self._conn is not None
            await self._conn.execute(query("engine_wakes"))
        except psycopg.Error:
            await self.close()  # closing the session lets go of the lock all the same

    async def close(self) -> None:
        self.asleep = False
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = await psycopg.AsyncConnection.connect(
                pool_conninfo(self._store.target, "charter-engine-sleep"),
                autocommit=True,
                # The connection idles while the engine sleeps: with keepalives, a call on
                # it after the server went away fails within a minute instead of waiting
                # out TCP's retransmissions.
                keepalives=1,
                keepalives_idle=30,
                keepalives_interval=10,
                keepalives_count=3,
            )
        return self._conn
