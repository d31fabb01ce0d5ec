"""One ``LISTEN charter_runs`` connection per store, so ``wait`` hears of a finished run
at once; a thread for :class:`~charter.db.store.Store`, a task for
:class:`~charter.db.store.AsyncStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

import psycopg

from charter.backoff import Backoff, short
from charter.db import connection as db

log = logging.getLogger("charter.store")


class RunListener:
    """One ``LISTEN charter_runs`` connection on a thread; ``wait_for(run_ids, timeout)``
    returns when one of them may have changed, or after ``timeout``. It reconnects on its
    own (waking every waiter, since a notice may have been missed)."""

    def __init__(self, target: db.DatabaseTarget) -> None:
        self._target = target
        self._changed = threading.Condition()
        self._version = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="charter-listener", daemon=True)
        self._thread.start()

    def changes(self) -> int:
        """A counter that moves on every notice; pass it to ``wait_for``."""
        with self._changed:
            return self._version

    def wait_for(self, seen: int, timeout: float) -> int:
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen, timeout)
            return self._version

    def close(self) -> None:
        self._closed.set()
        self._thread.join(2)

    def _bump(self) -> None:
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def _listen(self) -> None:
        backoff = Backoff()
        while not self._closed.is_set():
            try:
                with psycopg.connect(
                    db.pool_conninfo(self._target, "charter-listener"), autocommit=True
                ) as conn:
                    conn.execute("LISTEN charter_runs")
                    backoff.reset()
                    self._bump()
                    while not self._closed.is_set():
                        for _ in conn.notifies(timeout=0.5):
                            self._bump()
            except psycopg.Error as exc:
                if self._closed.is_set():
                    return
                delay = backoff.next_delay()
                log.debug(
                    "run listener lost its connection (%s); again in %.1fs", short(exc), delay
                )
                self._bump()
                self._closed.wait(delay)


class AsyncRunListener:
    """The asyncio twin of :class:`RunListener`, a task on the running loop."""

    def __init__(self, target: db.DatabaseTarget) -> None:
        self._target = target
        self._changed = asyncio.Condition()
        self._version = 0
        self._task = asyncio.get_running_loop().create_task(self._listen())

    def changes(self) -> int:
        return self._version

    async def wait_for(self, seen: int, timeout: float) -> int:
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._version != seen), timeout
                )
            return self._version

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _bump(self) -> None:
        async with self._changed:
            self._version += 1
            self._changed.notify_all()

    async def _listen(self) -> None:
        backoff = Backoff()
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    db.pool_conninfo(self._target, "charter-listener"), autocommit=True
                ) as conn:
                    await conn.execute("LISTEN charter_runs")
                    backoff.reset()
                    await self._bump()
                    async for _ in conn.notifies():
                        await self._bump()
            except psycopg.Error as exc:
                delay = backoff.next_delay()
                log.debug(
                    "run listener lost its connection (%s); again in %.1fs", short(exc), delay
                )
                await self._bump()
                await asyncio.sleep(delay)
