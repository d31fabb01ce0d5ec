"""Notices when something blocks the worker's event loop, and names the step doing it.

An ``async def`` handler that calls blocking code (``time.sleep``, a synchronous HTTP
client) stops every other task, the heartbeat included. A tick on the loop records the time;
a thread checks it, and when the loop has not ticked for ``threshold`` seconds it looks at
the loop thread's stack for the frame of a running async handler and logs which step, run
and line hold the loop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Callable
from types import CodeType, FrameType

from charter.worker.task import Task

log = logging.getLogger("charter.worker")


class LoopWatchdog:
    def __init__(
        self, threshold: float, running_async: Callable[[], dict[CodeType, list[Task]]]
    ) -> None:
        self.threshold = threshold
        self._running_async = running_async
        self._last_tick = time.monotonic()
        self._loop_thread = threading.get_ident()
        self._stopped = threading.Event()
        self._blocked_since: float | None = None
        self.blocks_seen = 0

    async def tick(self) -> None:
        """Runs on the loop for as long as the worker serves."""
        self._loop_thread = threading.get_ident()
        thread = threading.Thread(target=self._watch, name="charter-watchdog", daemon=True)
        thread.start()
        try:
            while True:
                self._last_tick = time.monotonic()
                await asyncio.sleep(self.threshold / 4)
        finally:
            self._stopped.set()

    def _watch(self) -> None:
        while not self._stopped.wait(self.threshold / 4):
            stalled = time.monotonic() - self._last_tick
            if stalled < self.threshold:
                if self._blocked_since is not None:
                    log.warning(
                        "the event loop was blocked for about %.1fs",
                        time.monotonic() - self._blocked_since,
                    )
                    self._blocked_since = None
                continue
            if self._blocked_since is None:
                self._blocked_since = self._last_tick
                self.blocks_seen += 1
                self._report(stalled)

    def _report(self, stalled: float) -> None:
        frame = sys._current_frames().get(self._loop_thread)
        culprit = _find_handler(frame, self._running_async())
        if culprit is None:
            log.warning(
                "the worker's event loop has been blocked for %.1fs (not by a step handler "
                "charter can see); heartbeats and other tasks wait until it is free",
                stalled,
            )
            return
        tasks, where = culprit
        task = tasks[0]
        others = f" (and {len(tasks) - 1} more tasks of this step)" if len(tasks) > 1 else ""
        log.warning(
            "step %s of run %s%s has blocked the worker's event loop for %.1fs at %s: an async "
            "def handler must not call blocking code (time.sleep, synchronous HTTP, heavy "
            "computation); make it a def handler, await the async equivalent, or use "
            "isolation='process'",
            task.label,
            task.run_id,
            others,
            stalled,
            where,
            extra={"run_id": task.run_id, "step": task.step, "task_index": task.index},
        )


def _find_handler(
    frame: FrameType | None, running: dict[CodeType, list[Task]]
) -> tuple[list[Task], str] | None:
    innermost = frame
    while frame is not None:
        tasks = running.get(frame.f_code)
        if tasks:
            where = "unknown line"
            if innermost is not None:
                code = innermost.f_code
                where = f"{code.co_filename}:{innermost.f_lineno} in {code.co_name}"
            return list(tasks), where
        frame = frame.f_back
    return None
