"""The threads sync handlers run in, handing results back to the event loop in groups.

A worker claims a hundred tasks at once, and a sync handler is often a few microseconds of
work: with one thread-pool future per task and one loop wake-up per result, handing tasks
over cost more than running them. Here a finished handler's result joins a list, and the
loop is woken once for whatever has finished by the time it looks. Threads start as
tasks need them, up to the worker's concurrency, and stay for the next ones.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

_Work = tuple[asyncio.Future[Any], Callable[[], Any]]


class HandlerThreads:
    def __init__(self, limit: int, name: str = "charter-step") -> None:
        if limit < 1:
            raise ValueError(f"handler threads need a limit of at least 1, not {limit}")
        self.limit = limit
        self._name = name
        self._work: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._finished: collections.deque[tuple[asyncio.Future[Any], bool, Any]] = (
            collections.deque()
        )
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for work
        self._queued = 0  # work no thread has taken yet
        self._busy = 0  # handlers queued or running
        self._lock = threading.Lock()
        self._wake_pending = False
        self._closed = False

    def submit(self, call: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run ``call()`` in a thread; the future gets its result or its exception."""
        if self._closed:
            raise RuntimeError("the worker's handler threads are shut down")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._busy += 1
            self._queued += 1
            start = self._queued > self._idle and len(self._threads) < self.limit
        if start:
            thread = threading.Thread(
                target=self._serve, name=f"{self._name}_{len(self._threads)}", daemon=True
            )
            try:
                thread.start()
            except BaseException:
                with self._lock:
                    self._busy -= 1
                    self._queued -= 1
                raise
            self._threads.append(thread)
        self._work.put((future, call))
        return future

    @property
    def running(self) -> int:
        """Handlers running now (or queued for a thread)."""
        return self._busy

    def shutdown(self) -> None:
        """Threads exit once their handler returns; queued work is dropped."""
        self._closed = True
        while True:
            try:
                item = self._work.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                    item[0].get_loop().call_soon_threadsafe(item[0].cancel)
                with self._lock:
                    self._busy -= 1
                    self._queued -= 1
        for _ in self._threads:
            self._work.put(None)  # one stop per thread

    def _serve(self) -> None:
        with self._lock:
            self._idle += 1
        while True:
            item = self._work.get()
            with self._lock:
                self._idle -= 1
                if item is not None:
                    self._queued -= 1
            if item is None:
                return
            future, call = item
            result: tuple[asyncio.Future[Any], bool, Any] = (future, True, None)
            if not future.cancelled():  # else nobody waits for it: do not run it
                try:
                    result = (future, True, call())
                except BaseException as exc:  # the caller's to judge, as with a pool's future
                    result = (future, False, exc)
            with self._lock:  # idle before the result is seen, so its successor reuses it
                self._busy -= 1
                self._idle += 1
            self._finished.append(result)
            loop = future.get_loop()
            # An idle thread holds nothing of the handler it ran (its inputs, its output).
            del item, future, call, result
            # Appended before the flag is read, and the loop clears the flag before it
            # drains: a result is never left behind without a wake-up on its way.
            if not self._wake_pending:
                self._wake_pending = True
                try:
                    loop.call_soon_threadsafe(self._deliver)
                except RuntimeError:  # the loop is closed: nobody waits for the result
                    self._wake_pending = False
            del loop

    def _deliver(self) -> None:
        self._wake_pending = False
        while self._finished:
            future, ok, value = self._finished.popleft()
            if future.done():  # cancelled while it ran
                continue
            if ok:
                future.set_result(value)
            elif isinstance(value, StopIteration):  # a future refuses it: say what it was
                future.set_exception(RuntimeError(f"the handler raised {value!r}"))
            else:
                future.set_exception(value)
