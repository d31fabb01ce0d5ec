"""The one data-access layer: connections, named queries, errors and reconnects.

Every client and registry operation is written once, without I/O, as a generator of
:class:`Call` objects (see :mod:`charter.ops`): each call names a query of
``sql/queries.sql``, its parameters, how to read the rows and whether it is safe to send
again. :class:`Store` runs operations on a psycopg connection pool and :class:`AsyncStore`
on an asyncio one; they differ only in ``await``. Both

* use the caller's own connection when given one (``connection=``), as is, inside the
  caller's transaction, without retries;
* otherwise take a pooled autocommit connection, migrate the schema on first use (unless
  told not to; a role that may not migrate checks that the schema is current instead), and
  ride through a lost connection (a PostgreSQL restart, a broken pooled connection) for
  calls that are safe to repeat, for up to ``reconnect_seconds``; a call that is not safe
  to repeat raises ``DatabaseConnectionLostError`` saying how to check;
* turn charter's SQLSTATEs into :class:`~charter.errors.CharterError` subclasses.

Each store keeps one run listener (:mod:`charter.db.listener`), so ``wait`` hears of a
finished run at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from charter import settings
from charter.backoff import Backoff, short
from charter.db import connection as db
from charter.db.listener import AsyncRunListener, RunListener
from charter.db.migrate import ensure_current
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.errors import DatabaseConnectionLostError, DatabaseUnreachableError

log = logging.getLogger("charter.store")


T = TypeVar("T")


Rows = list[tuple[Any, ...]]


_LOST = (psycopg.OperationalError, PoolTimeout)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One statement: a named query, its parameters, and how to read its rows."""

    query: str
    params: Mapping[str, Any]
    parse: Callable[[Rows], T]
    retry_safe: bool = True  # sending it twice has the effect of sending it once
    what: str = ""  # for messages: "cancelling run 'r-1'"
    dicts: bool = False  # rows as dicts by column name instead of tuples


@dataclass(frozen=True)
class Listen:
    """A request to the store's run listener: with ``seen`` None, the counter of run notices
    so far; otherwise wait until the counter moves past ``seen`` (a run may have changed)
    or ``timeout`` seconds pass, and return the counter."""

    seen: int | None = None
    timeout: float = 0.0


Request = Call[Any] | Listen


# An operation yields requests and receives their results; an error a request raises is
# thrown into it (so it may handle it), and what it returns is the operation's result.
Operation = Generator[Request, Any, T]


# A caller's own connection, for ``connection=``.
Connection = psycopg.Connection[Any]


AsyncConnection = psycopg.AsyncConnection[Any]


def single(call: Call[T]) -> Operation[T]:
    """An operation of one call."""
    result: T = yield call
    return result


def first_value(rows: Rows) -> Any:
    return rows[0][0] if rows else None


def decoded(value: Any) -> Any:
    """A jsonb value as Python data. A caller's connection may load jsonb as text (Django's
    does, to decode it itself), so text is decoded here."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def first_json(rows: Rows) -> Any:
    return decoded(rows[0][0]) if rows else None


def json_rows(rows: Rows) -> list[Any]:
    return [decoded(row[0]) for row in rows]


class _Driver(Generic[T]):
    """Steps an operation: its next request, given the last one's result or error; None
    once it returned (``value``)."""

    def __init__(self, operation: Operation[T]) -> None:
        self._operation = operation
        self.value: T | None = None

    def next(self, result: Any = None, error: Exception | None = None) -> Request | None:
        try:
            if error is not None:
                return self._operation.throw(error)
            return self._operation.send(result)
        except StopIteration as done:
            self.value = done.value
            return None


def perform(connection: psycopg.Connection[Any], request: Operation[T] | Call[T]) -> T:
    """Run an operation (or one call) on a connection of the caller's, without a Store: in
    the caller's transaction, with no retries (migrations, start-up checks, tests)."""
    driver = _Driver(single(request) if isinstance(request, Call) else request)
    step = driver.next()
    while step is not None:
        if isinstance(step, Listen):
            raise TypeError("waiting for runs needs a Store, not a bare connection")
        try:
            result = _execute_on(connection, step)
        except Exception as exc:
            step = driver.next(error=exc)
            continue
        step = driver.next(result)
    return driver.value  # type: ignore[return-value]


def _execute_on(connection: psycopg.Connection[Any], call: Call[T]) -> T:
    with charter_errors(call.params):
        cursor: Any = connection.cursor(row_factory=dict_row) if call.dicts else connection.cursor()
        cursor.execute(query(call.query), call.params)
        return call.parse(cursor.fetchall() if cursor.description else [])


async def _execute_on_async(connection: psycopg.AsyncConnection[Any], call: Call[T]) -> T:
    with charter_errors(call.params):
        cursor: Any = connection.cursor(row_factory=dict_row) if call.dicts else connection.cursor()
        await cursor.execute(query(call.query), call.params)
        return call.parse(await cursor.fetchall() if cursor.description else [])


@dataclass
class StoreOptions:
    migrate: bool = True
    pool_size: int = field(default_factory=settings.client_pool_size)
    reconnect_seconds: float = field(default_factory=settings.reconnect_seconds)
    application_name: str = "charter"
    # Settings every pooled connection makes for its session when it connects (a worker
    # given its orgs: charter.serve_orgs).
    session: Mapping[str, str] = field(default_factory=dict)


class _StoreBase:
    def __init__(self, target: db.DatabaseTarget, options: StoreOptions | None = None) -> None:
        self.target = target
        self.options = options or StoreOptions()

    def _lost(self, call: Call[Any], exc: BaseException) -> DatabaseConnectionLostError:
        return DatabaseConnectionLostError(
            f"The connection to PostgreSQL at {self.target.display} broke while "
            f"{call.what or call.query} ({short(exc)}), so charter cannot tell whether it took "
            "effect, and sending it again could do it twice. Check the outcome (e.g. `charter "
            "status RUN_ID`, `charter runs list`) before trying again."
        )

    def _gone(self, call: Call[Any], exc: BaseException) -> DatabaseUnreachableError:
        return DatabaseUnreachableError(
            f"PostgreSQL at {self.target.display} stayed unreachable for "
            f"{self.options.reconnect_seconds:g}s while {call.what or call.query} "
            f"({short(exc)}). Check that the server is running; CHARTER_RECONNECT_SECONDS "
            "sets how long charter keeps trying."
        )


class _Attempts:
    """The reconnect policy both stores share: after a lost connection, how long to wait
    before sending ``call`` again, or the error to raise instead."""

    def __init__(self, store: _StoreBase, call: Call[Any]) -> None:
        self._store = store
        self._call = call
        self._backoff = Backoff()
        self._deadline = time.monotonic() + store.options.reconnect_seconds

    def after(self, exc: BaseException) -> float:
        if not self._call.retry_safe and not isinstance(exc, PoolTimeout):
            raise self._store._lost(self._call, exc) from None
        if time.monotonic() >= self._deadline:
            raise self._store._gone(self._call, exc) from None
        first = self._backoff.attempts == 0
        delay = self._backoff.next_delay()
        return 0.0 if first else delay  # a broken pooled connection: try a fresh one at once


class Store(_StoreBase):
    """Runs operations with a thread-safe connection pool (opened on first use)."""

    def __init__(self, target: db.DatabaseTarget, options: StoreOptions | None = None) -> None:
        super().__init__(target, options)
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        self._listener: RunListener | None = None

    def perform(
        self, operation: Operation[T], connection: psycopg.Connection[Any] | None = None
    ) -> T:
        """Run every request of ``operation`` in turn, feeding each result back to it."""
        driver = _Driver(operation)
        request = driver.next()
        while request is not None:
            try:
                if isinstance(request, Listen):
                    result: Any = self._listen(request)
                else:
                    result = self.execute(request, connection)
            except Exception as exc:
                request = driver.next(error=exc)
                continue
            request = driver.next(result)
        return driver.value  # type: ignore[return-value]

    def _listen(self, request: Listen) -> int:
        listener = self.listener()
        if request.seen is None:
            return listener.changes()
        return listener.wait_for(request.seen, request.timeout)

    def execute(self, call: Call[T], connection: psycopg.Connection[Any] | None = None) -> T:
        if connection is not None:
            return _execute_on(connection, call)
        attempts = _Attempts(self, call)
        while True:
            try:
                with self.pool().connection() as conn:
                    return _execute_on(conn, call)
            except _LOST as exc:
                delay = attempts.after(exc)
                self.pool().check()  # drop every pooled connection the restart broke
                time.sleep(delay)

    def pool(self) -> ConnectionPool:
        if self._pool is not None:  # every call comes here: no lock once it exists
            return self._pool
        with self._lock:
            if self._pool is None:
                with db.connect(self.target) as conn:  # clear errors before the pool tries
                    if self.options.migrate:
                        ensure_current(conn)
                self._pool = ConnectionPool(
                    db.pool_conninfo(self.target, self.options.application_name),
                    min_size=1,
                    max_size=self.options.pool_size,
                    timeout=db.connect_timeout(),
                    kwargs={"autocommit": True},
                    configure=self._configure if self.options.session else None,
                    open=True,
                )
            return self._pool

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        session = self.options.session
        conn.execute(query("set_session"), (list(session), list(session.values())))

    def listener(self) -> RunListener:
        with self._lock:
            if self._listener is None:
                self._listener = RunListener(self.target)
            return self._listener

    def close(self) -> None:
        with self._lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            if self._pool is not None:
                self._pool.close()
                self._pool = None


class AsyncStore(_StoreBase):
    """The asyncio twin of :class:`Store`."""

    def __init__(self, target: db.DatabaseTarget, options: StoreOptions | None = None) -> None:
        super().__init__(target, options)
        self._pool: AsyncConnectionPool | None = None
        self._lock = asyncio.Lock()
        self._listener: AsyncRunListener | None = None

    async def perform(
        self, operation: Operation[T], connection: psycopg.AsyncConnection[Any] | None = None
    ) -> T:
        driver = _Driver(operation)
        request = driver.next()
        while request is not None:
            try:
                if isinstance(request, Listen):
                    result: Any = await self._listen(request)
                else:
                    result = await self.execute(request, connection)
            except Exception as exc:
                request = driver.next(error=exc)
                continue
            request = driver.next(result)
        return driver.value  # type: ignore[return-value]

    async def _listen(self, request: Listen) -> int:
        listener = await self.listener()
        if request.seen is None:
            return listener.changes()
        return await listener.wait_for(request.seen, request.timeout)

    async def execute(
        self, call: Call[T], connection: psycopg.AsyncConnection[Any] | None = None
    ) -> T:
        if connection is not None:
            return await _execute_on_async(connection, call)
        attempts = _Attempts(self, call)
        while True:
            try:
                pool = await self.pool()
                async with pool.connection() as conn:
                    return await _execute_on_async(conn, call)
            except _LOST as exc:
                delay = attempts.after(exc)
                await (await self.pool()).check()  # drop the pooled connections that broke
                await asyncio.sleep(delay)

    async def pool(self) -> AsyncConnectionPool:
        if self._pool is not None:  # every call comes here: no lock once it exists
            return self._pool
        async with self._lock:
            if self._pool is None:
                await asyncio.to_thread(self._prepare)
                self._pool = AsyncConnectionPool(
                    db.pool_conninfo(self.target, self.options.application_name),
                    min_size=1,
                    max_size=self.options.pool_size,
                    timeout=db.connect_timeout(),
                    kwargs={"autocommit": True},
                    configure=self._configure if self.options.session else None,
                    open=False,
                )
                await self._pool.open()
            return self._pool

    async def _configure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        session = self.options.session
        await conn.execute(query("set_session"), (list(session), list(session.values())))

    def _prepare(self) -> None:
        with db.connect(self.target) as conn:
            if self.options.migrate:
                ensure_current(conn)

    async def listener(self) -> AsyncRunListener:
        async with self._lock:
            if self._listener is None:
                self._listener = AsyncRunListener(self.target)
            return self._listener

    async def close(self) -> None:
        async with self._lock:
            if self._listener is not None:
                await self._listener.close()
                self._listener = None
            if self._pool is not None:
                await self._pool.close()
                self._pool = None
