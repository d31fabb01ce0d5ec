"""The worker: claims tasks, runs their handlers, hands results back in groups.

Four asyncio loops share one connection pool:

* claim — whenever slots are free, claim up to that many tasks (one query); then wait for a
  NOTIFY wake-up or the poll interval;
* execute — one asyncio task per claimed task: async handlers on the loop, sync handlers in
  a thread pool; the slot frees the moment the handler returns;
* complete — drains finished tasks and completes (or fails) all of them in one transaction;
* heartbeat — renews the leases of in-flight tasks and the worker's row.

A worker that dies loses nothing: its tasks' leases expire and the claim query of any
worker takes them back, counting the lost attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import socket
import time
import traceback
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from charter.db.connection import DatabaseTarget
from charter.db.queries import query
from charter.dsl.flow import Flow
from charter.engine.runs import json_text
from charter.errors import CharterError, RunInputError, StepInputError, StepOutputError
from charter.worker.context import Context, step_logger

log = logging.getLogger("charter.worker")

_MAX_MESSAGE = 2_000
_MAX_TRACEBACK = 8_000
_RETRYABLE_DB_ERRORS = (psycopg.OperationalError, PoolTimeout)


@dataclass(frozen=True)
class WorkerSettings:
    concurrency: int = 10
    batch_size: int = 50  # tasks claimed per query, at most the free slots
    lease_seconds: int = 30
    poll_interval: float = 1.0
    grace_seconds: float = 30.0
    completion_batch: int = 100


@dataclass(frozen=True)
class _Task:
    id: int
    run_id: str
    flow: str
    step: str
    index: int
    attempt: int
    token: uuid.UUID
    key: str
    run_input: Any
    inputs: dict[str, Any] | None
    item: Any
    timeout: int


@dataclass(frozen=True)
class _Outcome:
    task: _Task
    output: str | None = None  # JSON text, when the handler succeeded
    error: dict[str, Any] | None = None
    permanent: bool = False
    cost: float = 0.0


class Worker:
    """Runs the tasks of ``flows``. ``serve()`` returns after ``stop()`` (or a signal)."""

    def __init__(
        self,
        flows: Sequence[Flow],
        target: DatabaseTarget,
        settings: WorkerSettings | None = None,
        *,
        worker_id: str | None = None,
    ) -> None:
        self.flows = {flow.slug: flow for flow in flows}
        self.target = target
        self.settings = settings or WorkerSettings()
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.completed = 0
        self.failed = 0
        self._threads = ThreadPoolExecutor(
            self.settings.concurrency, thread_name_prefix="charter-step"
        )
        self._inflight: dict[int, tuple[_Task, asyncio.Task[None]]] = {}
        self._lost: set[int] = set()
        self._results: asyncio.Queue[_Outcome | None] = asyncio.Queue()
        self._wake = asyncio.Event()
        self._slot_freed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._pool: AsyncConnectionPool | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def stop(self) -> None:
        """Stop claiming; in-flight tasks finish (up to the grace period), then serve() returns."""
        self._stopping.set()
        self._wake.set()
        self._slot_freed.set()

    async def serve(self, *, install_signals: bool = False) -> None:
        if install_signals:
            self._install_signals()
        self._pool = AsyncConnectionPool(
            self.target.url,
            min_size=2,
            max_size=4,
            timeout=10,
            open=False,
            kwargs={"autocommit": True, "application_name": "charter-worker"},
        )
        await self._pool.open()
        await self._call(
            "register_worker",
            {
                "worker_id": self.id,
                "hostname": socket.gethostname(),
                "pid": os.getpid(),
                "flows": sorted(self.flows),
                "concurrency": self.settings.concurrency,
            },
        )
        log.info(
            "worker %s started: flows %s, concurrency %d",
            self.id,
            ", ".join(sorted(self.flows)),
            self.settings.concurrency,
        )
        loops = [
            asyncio.create_task(self._listen(), name="charter-listen"),
            asyncio.create_task(self._heartbeat(), name="charter-heartbeat"),
        ]
        completer = asyncio.create_task(self._complete_loop(), name="charter-complete")
        try:
            await self._claim_loop()
            await self._drain_inflight()
        finally:
            await self._results.put(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(completer, timeout=self.settings.grace_seconds)
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._call("worker_stopped", {"worker_id": self.id})
            await self._pool.close()
            self._threads.shutdown(wait=False, cancel_futures=True)
            log.info(
                "worker %s stopped: %d completed, %d failed attempts",
                self.id,
                self.completed,
                self.failed,
            )

    @property
    def has_running_threads(self) -> bool:
        return any(t.is_alive() for t in getattr(self._threads, "_threads", ()))

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()

        def on_signal(signum: int) -> None:
            if self._stopping.is_set():
                log.warning(
                    "second %s: exiting now; unfinished tasks return through their leases",
                    signal.Signals(signum).name,
                )
                os._exit(130)
            log.info(
                "%s: finishing in-flight tasks (up to %gs), claiming no more; send it "
                "again to exit at once",
                signal.Signals(signum).name,
                self.settings.grace_seconds,
            )
            self.stop()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal, signum)

    async def _drain_inflight(self) -> None:
        deadline = time.monotonic() + self.settings.grace_seconds
        while self._inflight and time.monotonic() < deadline:
            self._slot_freed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._slot_freed.wait(), deadline - time.monotonic())
        if self._inflight:
            log.warning(
                "%d tasks still running after the grace period; their leases will "
                "expire and another worker will retry them",
                len(self._inflight),
            )
            for _, running in self._inflight.values():
                running.cancel()

    # -- claim and execute ---------------------------------------------------------------

    async def _claim_loop(self) -> None:
        backoff = _Backoff()
        while not self._stopping.is_set():
            free = self.settings.concurrency - len(self._inflight)
            if free <= 0:
                self._slot_freed.clear()
                await self._slot_freed.wait()
                continue
            self._wake.clear()  # before claiming, so a NOTIFY during the claim is not lost
            wanted = min(free, self.settings.batch_size)
            try:
                rows = await self._fetch(
                    "claim_tasks",
                    {
                        "worker_id": self.id,
                        "flows": list(self.flows),
                        "limit": wanted,
                        "lease_seconds": self.settings.lease_seconds,
                    },
                )
            except _RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("claiming tasks", exc, self._stopping)
                continue
            backoff.reset()
            for row in rows:
                self._spawn(_task_from_row(row))
            if len(rows) < wanted:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.poll_interval)

    def _spawn(self, task: _Task) -> None:
        running = asyncio.create_task(self._execute(task), name=f"charter-task-{task.id}")
        self._inflight[task.id] = (task, running)

    async def _execute(self, task: _Task) -> None:
        try:
            outcome = await self._run_handler(task)
        except asyncio.CancelledError:
            return  # lease lost or shutting down: the task comes back through its lease
        finally:
            self._inflight.pop(task.id, None)
            self._slot_freed.set()
        if task.id in self._lost:
            self._lost.discard(task.id)
            return
        await self._results.put(outcome)

    async def _run_handler(self, task: _Task) -> _Outcome:
        flow = self.flows.get(task.flow)
        step = flow.steps.get(task.step) if flow else None
        if step is None:
            return _Outcome(
                task,
                error={
                    "type": "StepNotInCode",
                    "message": f"Step '{task.step}' of flow '{task.flow}' is not in this worker's "
                    "code: the run is pinned to a version the code no longer has. Run "
                    "a worker with that version's code, or cancel the run.",
                },
                permanent=True,
            )
        ctx = Context(
            run_id=task.run_id,
            flow=task.flow,
            step=task.step,
            task_index=task.index,
            attempt=task.attempt,
            idempotency_key=task.key,
            run_input=task.run_input,
            inputs=task.inputs or {},
            logger=step_logger(task.run_id, task.step, task.index),
        )
        try:
            if step.step_type == "map":
                kwargs = step.spec.bind_item(task.item, ctx=ctx)
            else:
                kwargs = step.spec.bind(run_input=task.run_input, inputs=task.inputs or {}, ctx=ctx)
            if step.spec.is_async:
                result = await asyncio.wait_for(step.handler(**kwargs), task.timeout)
            else:
                call = functools.partial(step.handler, **kwargs)
                future = asyncio.get_running_loop().run_in_executor(self._threads, call)
                result = await asyncio.wait_for(future, task.timeout)
            output = step.spec.output(result)
            try:
                text = json_text(output, f"The output of step '{task.step}'")
            except RunInputError as exc:
                raise StepOutputError(exc.message) from None
            return _Outcome(task, output=text, cost=ctx.cost_usd)
        except TimeoutError:
            return _Outcome(
                task,
                cost=ctx.cost_usd,
                error={
                    "type": "Timeout",
                    "message": f"Step '{task.step}' did not finish within its timeout of "
                    f"{task.timeout}s (attempt {task.attempt}); raise the step's "
                    "timeout= if it needs longer.",
                },
            )
        except (StepInputError, StepOutputError) as exc:
            return _Outcome(task, error=_error(exc), permanent=True, cost=ctx.cost_usd)
        except Exception as exc:
            return _Outcome(task, error=_error(exc), cost=ctx.cost_usd)

    # -- complete ------------------------------------------------------------------------

    async def _complete_loop(self) -> None:
        finished = False
        while not finished:
            first = await self._results.get()
            batch: list[_Outcome] = []
            if first is None:
                finished = True
            else:
                batch.append(first)
            while len(batch) < self.settings.completion_batch and not self._results.empty():
                item = self._results.get_nowait()
                if item is None:
                    finished = True
                else:
                    batch.append(item)
            if batch:
                await self._flush(batch)

    async def _flush(self, batch: list[_Outcome]) -> None:
        backoff = _Backoff()
        while True:
            try:
                await self._record(batch)
                break
            except _RETRYABLE_DB_ERRORS as exc:
                if self._stopping.is_set() and backoff.attempts >= 5:
                    log.warning(
                        "giving up recording %d results; their tasks will be retried "
                        "when their leases expire",
                        len(batch),
                    )
                    return
                await backoff.sleep("recording results", exc, None)
            except psycopg.Error as exc:
                if len(batch) == 1:
                    await self._record_rejected(batch[0], exc)
                    break
                # One bad result must not hold up the others: record them one by one.
                for outcome in batch:
                    await self._flush([outcome])
                break
        self._wake.set()  # successors are probably queued now

    async def _record(self, batch: list[_Outcome]) -> None:
        done = [o for o in batch if o.error is None]
        failed = [o for o in batch if o.error is not None]
        assert self._pool is not None
        async with self._pool.connection() as conn, conn.transaction():
            if done:
                await conn.execute(
                    query("complete_tasks"),
                    {
                        "task_ids": [o.task.id for o in done],
                        "tokens": [o.task.token for o in done],
                        "outputs": [o.output for o in done],
                        "worker_id": self.id,
                        "costs": [o.cost for o in done],
                    },
                )
            if failed:
                await conn.execute(
                    query("fail_tasks"),
                    {
                        "task_ids": [o.task.id for o in failed],
                        "tokens": [o.task.token for o in failed],
                        "errors": [json_text(o.error, "error") for o in failed],
                        "permanent": [o.permanent for o in failed],
                        "worker_id": self.id,
                        "costs": [o.cost for o in failed],
                    },
                )
        self.completed += len(done)
        self.failed += len(failed)
        for outcome in failed:
            error = outcome.error or {}
            log.warning(
                "run %s step %s[%d] attempt %d failed: %s: %s",
                outcome.task.run_id,
                outcome.task.step,
                outcome.task.index,
                outcome.task.attempt,
                error.get("type"),
                error.get("message"),
            )

    async def _record_rejected(self, outcome: _Outcome, exc: psycopg.Error) -> None:
        """The database refused a result (say, an output it cannot store): fail the attempt."""
        if outcome.error is not None:
            log.error("could not record the failure of task %d: %s", outcome.task.id, exc)
            return
        error = {
            "type": "OutputRejected",
            "message": f"PostgreSQL refused the output of step '{outcome.task.step}': "
            f"{exc.diag.message_primary or exc}"[:_MAX_MESSAGE],
        }
        await self._flush([_Outcome(outcome.task, error=error, permanent=True)])

    # -- listen and heartbeat ------------------------------------------------------------

    async def _listen(self) -> None:
        backoff = _Backoff()
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.target.url, autocommit=True
                ) as conn:
                    await conn.execute("LISTEN charter_tasks")
                    backoff.reset()
                    self._wake.set()  # anything queued while we were not listening
                    async for note in conn.notifies():
                        if note.payload in self.flows:
                            self._wake.set()
            except _RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("listening for new tasks", exc, None)

    async def _heartbeat(self) -> None:
        interval = max(self.settings.lease_seconds / 3, 0.5)
        last_partitions = time.monotonic()
        while True:
            await asyncio.sleep(interval)
            tasks = [task for task, _ in self._inflight.values()]
            try:
                held = await self._fetch(
                    "extend_leases",
                    {
                        "worker_id": self.id,
                        "task_ids": [t.id for t in tasks],
                        "tokens": [t.token for t in tasks],
                        "lease_seconds": self.settings.lease_seconds,
                    },
                )
                if time.monotonic() - last_partitions > 3600:
                    await self._call("ensure_partitions", {})
                    last_partitions = time.monotonic()
            except _RETRYABLE_DB_ERRORS as exc:
                log.warning("heartbeat failed (%s); retrying", _short(exc))
                continue
            still_held = set(held[0]["extend_leases"]) if held else set()
            for task in tasks:
                if task.id not in still_held and task.id in self._inflight:
                    # Cancelled run or lease taken over: the result would be stale anyway.
                    self._lost.add(task.id)
                    self._inflight[task.id][1].cancel()

    # -- database helpers ----------------------------------------------------------------

    async def _fetch(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        assert self._pool is not None
        async with self._pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(query(name), params)
            return await cur.fetchall()

    async def _call(self, name: str, params: dict[str, Any]) -> None:
        assert self._pool is not None
        async with self._pool.connection() as conn:
            await conn.execute(query(name), params)


class _Backoff:
    """Exponential backoff (0.1 s doubling to 5 s) for a lost database, with a log line."""

    def __init__(self) -> None:
        self.attempts = 0

    def reset(self) -> None:
        self.attempts = 0

    async def sleep(self, doing: str, exc: BaseException, stop: asyncio.Event | None) -> None:
        delay = min(0.1 * 2**self.attempts, 5.0)
        self.attempts += 1
        log.warning(
            "database unavailable while %s (%s); retrying in %.1fs", doing, _short(exc), delay
        )
        if stop is None:
            await asyncio.sleep(delay)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)


def _task_from_row(row: dict[str, Any]) -> _Task:
    return _Task(
        id=row["task_id"],
        run_id=row["run_id"],
        flow=row["flow_slug"],
        step=row["step_slug"],
        index=row["task_index"],
        attempt=row["attempt"],
        token=row["delivery_token"],
        key=row["idempotency_key"],
        run_input=row["run_input"],
        inputs=row["inputs"],
        item=row["item"],
        timeout=row["timeout_seconds"],
    )


def _error(exc: BaseException) -> dict[str, Any]:
    # U+0000 cannot be stored in PostgreSQL JSON; an error message must never be refused.
    message = (exc.message if isinstance(exc, CharterError) else str(exc)).replace("\x00", "\\0")
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + f"… ({len(message) - _MAX_MESSAGE} more characters)"
    trace = "".join(traceback.format_exception(exc)).replace("\x00", "\\0")
    if len(trace) > _MAX_TRACEBACK:
        trace = "…" + trace[-_MAX_TRACEBACK:]
    error: dict[str, Any] = {"type": type(exc).__name__, "message": message, "traceback": trace}
    if isinstance(exc, CharterError):
        error["code"] = exc.code
    return error


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
