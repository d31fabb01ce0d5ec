"""Recording finished tasks: group completion, and nothing that can stop it silently.

Outcomes queue up while handlers run; the completion loop takes everything queued and
records it in one call and one transaction (``record_outcomes``, which locks the group's
runs in one order, so two workers cannot deadlock). The same transaction claims tasks for
the slots free by then (``record_outcomes_and_claim``): a chain's next step is claimed as
its predecessor is recorded, and a busy worker commits once per group. A lost connection is
retried with backoff. Any other error is logged and narrowed down: a batch is retried one
outcome at a time, and an outcome the database refuses fails its attempt with the reason,
so one bad result never holds up the others and the loop never dies.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import psycopg
from psycopg_pool import PoolTimeout

from charter.backoff import Backoff
from charter.db.store import AsyncStore, Call
from charter.errors import CharterError, DatabaseConnectionLostError, DatabaseUnreachableError
from charter.payloads import json_text
from charter.vocabulary import FailureKind
from charter.worker.task import Outcome, plain_error

log = logging.getLogger("charter.worker")

# A lost database, as the driver or the store reports it: wait and try again.
RETRYABLE_DB_ERRORS = (
    psycopg.OperationalError,
    PoolTimeout,
    DatabaseUnreachableError,
    DatabaseConnectionLostError,
)


class Refill(Protocol):
    """The worker's side of claiming with a group: the claim's parameters for the slots free
    now (reserved until ``refilled``), or None when this group should claim nothing."""

    def reserve(self, outcomes: Sequence[Outcome]) -> dict[str, Any] | None: ...

    def refilled(self, claim: dict[str, Any], rows: list[dict[str, Any]]) -> None: ...


class Completer:
    def __init__(
        self,
        store: AsyncStore,
        worker_id: str,
        batch_size: int,
        stopping: asyncio.Event,
        on_recorded: Callable[[Sequence[Outcome]], None],
        refill: Refill | None = None,
    ) -> None:
        self.store = store
        self.worker_id = worker_id
        self.batch_size = batch_size
        self.queue: asyncio.Queue[Outcome | None] = asyncio.Queue()
        self.completed = 0
        self.failed = 0
        self._stopping = stopping
        self._on_recorded = on_recorded
        self._refill = refill

    @property
    def pending(self) -> bool:
        """Outcomes wait to be recorded: their group will claim for the slots they freed."""
        return not self.queue.empty()

    async def put(self, outcome: Outcome) -> None:
        await self.queue.put(outcome)

    async def finish(self) -> None:
        await self.queue.put(None)

    async def loop(self) -> None:
        """Runs until finish() is called and everything queued before it is recorded."""
        finished = False
        while not finished:
            first = await self.queue.get()
            batch: list[Outcome] = []
            if first is None:
                finished = True
            else:
                batch.append(first)
            while len(batch) < self.batch_size and not self.queue.empty():
                item = self.queue.get_nowait()
                if item is None:
                    finished = True
                else:
                    batch.append(item)
            if batch:
                claimed = False
                try:
                    claimed = await self._flush(batch)
                except Exception:
                    log.exception(
                        "could not record %d results; their tasks come back when their "
                        "leases expire",
                        len(batch),
                    )
                if not claimed:  # else it claimed whatever its group queued already
                    self._on_recorded(batch)

    async def _flush(self, batch: list[Outcome], *, claim: bool = True) -> bool:
        """Records the group, claiming with it if it may; True if it did claim."""
        backoff = Backoff()
        while True:
            try:
                return await self.record(batch, claim=claim)
            except RETRYABLE_DB_ERRORS as exc:
                if self._stopping.is_set() and backoff.attempts >= 5:
                    log.warning(
                        "giving up recording %d results; their tasks will be retried "
                        "when their leases expire",
                        len(batch),
                    )
                    return False
                await backoff.sleep("recording results", exc, None)
            except Exception as exc:
                if claim:  # the claim may be what failed: record the group alone first
                    claim = False
                    continue
                if len(batch) > 1:
                    # One bad result must not hold up the others: record them one by one.
                    for outcome in batch:
                        await self._flush([outcome], claim=False)
                    return False
                await self._reject(batch[0], exc)
                return False

    async def record(self, batch: list[Outcome], *, claim: bool = False) -> bool:
        """Records the group; with ``claim``, also claims tasks for the worker's free slots
        (True if it did)."""
        done = [o for o in batch if o.succeeded]
        failed = [o for o in batch if not o.succeeded]
        params = self._params(batch)
        refiller = self._refill if claim else None
        refill = refiller.reserve(batch) if refiller else None
        if refiller is None or refill is None:
            await self.store.execute(_call("record_outcomes", params))
        else:
            rows: list[dict[str, Any]] = []
            try:
                rows = await self.store.execute(
                    Call[list[Any]](
                        "record_outcomes_and_claim",
                        params | refill,
                        list,
                        dicts=True,
                        what="recording results and claiming tasks",
                    )
                )
            finally:
                refiller.refilled(refill, rows)
        self.completed += len(done)
        self.failed += len(failed)
        for outcome in batch:
            log_outcome(outcome, self.worker_id)
        return refill is not None

    def _params(self, batch: list[Outcome]) -> dict[str, Any]:
        return {
            "task_ids": [o.task.id for o in batch],
            "org_ids": [o.task.org for o in batch],
            "tokens": [o.task.token for o in batch],
            "outputs": [o.output for o in batch],
            "errors": [None if o.succeeded else json_text(o.error, "error") for o in batch],
            "permanent": [o.permanent for o in batch],
            "worker_id": self.worker_id,
            "costs": [o.cost for o in batch],
            "directives": [
                None if o.directive is None else json_text(o.directive, "directive") for o in batch
            ],
        }

    async def _reject(self, outcome: Outcome, exc: Exception) -> None:
        """The database (or charter) could not record this outcome: fail the attempt with the
        reason. Data the database refuses will be refused again, so that is permanent."""
        reason = _reason(exc)
        log.error(
            "could not record the result of step %s of run %s (%s); failing the attempt",
            outcome.task.label,
            outcome.task.run_id,
            reason,
            exc_info=exc,
            extra=_extra(outcome, self.worker_id),
        )
        if outcome.succeeded:
            error = plain_error(
                FailureKind.OUTPUT_REJECTED,
                f"charter could not record the output of step '{outcome.task.step}': {reason}",
            )
        else:
            error = plain_error(
                FailureKind.COMPLETION_FAILED,
                f"charter could not record the failure of step '{outcome.task.step}' as it "
                f"was ({reason}); it failed with {(outcome.error or {}).get('type')}.",
            )
        # The database refuses the same data again: no point retrying. Others may pass.
        permanent = isinstance(
            exc, psycopg.DataError | psycopg.IntegrityError | ValueError | CharterError
        )
        replacement = Outcome(outcome.task, error=error, permanent=permanent, cost=outcome.cost)
        try:
            await self.record([replacement])
        except Exception:
            log.exception(
                "could not record the failure of step %s of run %s either; its task comes "
                "back when its lease expires",
                outcome.task.label,
                outcome.task.run_id,
            )


def _call(name: str, params: dict[str, Any]) -> Call[list[Any]]:
    # Fenced by delivery tokens, so a resent completion is only ever 'stale'.
    return Call(name, params, list, retry_safe=True, what="recording results")


def log_outcome(outcome: Outcome, worker_id: str) -> None:
    """One log record per finished attempt, with its ids and outcome as attributes."""
    task = outcome.task
    extra = _extra(outcome, worker_id)
    if outcome.succeeded:
        log.debug(
            "run %s step %s attempt %d completed in %.3fs",
            task.run_id,
            task.label,
            task.attempt,
            outcome.duration,
            extra=extra,
        )
        return
    error = outcome.error or {}
    log.warning(
        "run %s step %s attempt %d failed%s: %s: %s",
        task.run_id,
        task.label,
        task.attempt,
        " (no retry)" if outcome.permanent else "",
        error.get("type"),
        error.get("message"),
        extra=extra,
    )


def _extra(outcome: Outcome, worker_id: str) -> dict[str, Any]:
    task = outcome.task
    return {
        "worker": worker_id,
        "run_id": task.run_id,
        "flow": task.flow,
        "step": task.step,
        "task_index": task.index,
        "attempt": task.attempt,
        "outcome": "completed" if outcome.succeeded else "failed",
        "duration": round(outcome.duration, 6),
    }


def _reason(exc: Exception) -> str:
    if isinstance(exc, psycopg.Error) and exc.diag.message_primary:
        return exc.diag.message_primary
    if isinstance(exc, CharterError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"[:500]
