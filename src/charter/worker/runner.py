"""The worker: claims tasks, runs their handlers, hands results back in groups.

Loops on one asyncio event loop, sharing a small connection pool:

* claim — whenever slots are free, claim up to that many tasks (one query) of the flow
  versions this code matches; then wait for a NOTIFY wake-up or the poll interval;
* execute — one asyncio task per claimed task (:mod:`charter.worker.execute`);
* complete — records finished tasks in groups (:mod:`charter.worker.completion`);
* heartbeat — renews the leases of in-flight tasks and looks again for matching versions;
* upkeep — makes the evidence table's monthly partitions ahead of time;
* documents — applies document events to workflow instances and resumes due waits
  (:mod:`charter.worker.documents`), unless ``documents=False``;
* watchdog — notices a blocked event loop and names the step that blocks it.

A worker that dies loses nothing: its tasks' leases expire and the claim query of any
worker takes them back, counting the lost attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from charter import settings as environment
from charter.backoff import Backoff, short
from charter.compiler.flows import extract_flow_shape
from charter.db.connection import DatabaseTarget, pool_conninfo
from charter.db.store import AsyncStore, Call, StoreOptions
from charter.dsl.actions import ActionHandler
from charter.dsl.flow import Flow
from charter.errors import ArgumentError, CompiledWorkflowError
from charter.ops.arguments import text_argument
from charter.ops.compiled_artifacts import problem, stored_version
from charter.vocabulary import FailureKind
from charter.worker.completion import RETRYABLE_DB_ERRORS, Completer
from charter.worker.deliveries import channel_types
from charter.worker.documents import DocumentsEngine
from charter.worker.execute import Executor
from charter.worker.metrics import METRICS
from charter.worker.task import Outcome, Task, plain_error, task_from_row
from charter.worker.watchdog import LoopWatchdog

log = logging.getLogger("charter.worker")

_UPKEEP_INTERVAL_S = 3600


@dataclass(frozen=True)
class WorkerSettings:
    # Tasks at once. Claims and completions go in groups as large as the free slots, and a
    # worker's rate is bound by its round trips, not its CPU: a couple of hundred slots make
    # each commit carry a hundred tasks (async handlers cost nothing idle; sync ones get
    # threads only as they need them). To spare a downstream service, give the flow a
    # concurrency or rate limit, which hold across workers.
    concurrency: int = 200
    batch_size: int = 100  # tasks claimed per query, at most the free slots
    lease_seconds: int = 30
    poll_interval: float = 1.0
    grace_seconds: float = 30.0
    completion_batch: int = 100
    block_warning_seconds: float = 1.0  # the watchdog logs an event loop blocked this long
    pool_size: int = 4
    # The orgs this worker serves (all when empty): it claims their tasks, events, action
    # tasks and side effects only, and fires their waits and schedules.
    orgs: tuple[str, ...] = ()
    # The side effects' channels (charter.worker.deliveries), by default from the
    # environment when the settings are made: email needs an SMTP URL
    # (smtp://user:password@host:587?from=…, CHARTER_SMTP_URL), SMS a provider URL
    # (CHARTER_SMS_URL) and its class (CHARTER_SMS_PROVIDER, twilio or package.module:Class).
    # Webhooks reach no private address but those webhook_allow opts in (comma-separated
    # CIDRs, CHARTER_WEBHOOK_ALLOW).
    smtp_url: str | None = field(default_factory=environment.smtp_url)
    sms_url: str | None = field(default_factory=environment.sms_url)
    sms_provider: str = field(default_factory=environment.sms_provider)
    webhook_allow: str = field(default_factory=environment.webhook_allow)


class Worker:
    """Runs the tasks of ``flows``. ``serve()`` returns after ``stop()`` (or a signal)."""

    def __init__(
        self,
        flows: Sequence[Flow],
        target: DatabaseTarget,
        settings: WorkerSettings | None = None,
        *,
        worker_id: str | None = None,
        documents: bool = True,
        actions: dict[str, ActionHandler] | None = None,
    ) -> None:
        self.flows = {flow.slug: flow for flow in flows}
        self.target = target
        self.settings = settings or WorkerSettings()
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.versions: list[str] = []  # the flow versions this code can run
        self.executor = Executor(self.flows, self.settings.concurrency)
        self.watchdog = LoopWatchdog(
            self.settings.block_warning_seconds, lambda: self.executor.running_async
        )
        self._shapes = Jsonb({slug: extract_flow_shape(flow) for slug, flow in self.flows.items()})
        self._inflight: dict[int, tuple[Task, asyncio.Task[None]]] = {}
        self._reserved = 0  # slots a claim in flight may fill
        # The last claim filled every slot it asked for: more work is probably queued.
        self._backlog = False
        # (flow, step) of the steps others depend on: recording one queues work at once.
        self._leading = {
            (slug, dependency)
            for slug, flow in self.flows.items()
            for step in flow.steps.values()
            for dependency in step.dependencies
        }
        # (flow, step) of the steps whose claims are limited (a concurrency key, a rate
        # limit): a finished one may free a slot or a token for a task a claim passed over,
        # and nothing notifies of that.
        self._limited = {
            (slug, step.slug)
            for slug, flow in self.flows.items()
            for step in flow.steps.values()
            if _LIMITS & (flow.options.limits.keys() | step.options.limits.keys())
        }
        self._lost: set[int] = set()
        self._wake = asyncio.Event()
        self._slot_freed = asyncio.Event()
        self._stopping = asyncio.Event()
        self.store = AsyncStore(
            target,
            StoreOptions(
                migrate=False,  # the command that starts a worker checks the schema first
                pool_size=self.settings.pool_size,
                reconnect_seconds=0,  # the loops below wait out a lost database themselves
                application_name="charter-worker",
                session=served_orgs(self.settings.orgs),
            ),
        )
        self._completer: Completer | None = None
        self._verdicts: dict[str, CompiledWorkflowError | None] = {}  # by version id
        self.heartbeat_errors = 0
        self.ready = threading.Event()  # set once registered, for whoever waits on another thread
        self.executor.on_slot_freed = self._slot_freed.set
        self.documents = (
            DocumentsEngine(
                self.store,
                self.id,
                lease_seconds=self.settings.lease_seconds,
                poll_interval=self.settings.poll_interval,  # NOTIFY wakes it sooner
                actions=dict(actions or {}),
                settings=self.settings,
            )
            if documents
            else None
        )

    @property
    def completed(self) -> int:
        return self._completer.completed if self._completer else 0

    @property
    def failed(self) -> int:
        return self._completer.failed if self._completer else 0

    @property
    def free_slots(self) -> int:
        """Slots a claim may fill: overrunning sync handlers still hold theirs, and a claim
        in flight holds those it asked for."""
        return (
            self.settings.concurrency
            - len(self._inflight)
            - self.executor.overrunning
            - self._reserved
        )

    # -- lifecycle -----------------------------------------------------------------------

    def stop(self) -> None:
        """Stop claiming; in-flight tasks finish (up to the grace period), then serve() returns."""
        self._stopping.set()
        self._wake.set()
        self._slot_freed.set()

    async def serve(self, *, install_signals: bool = False) -> None:
        if install_signals:
            self._install_signals()
        self._completer = Completer(
            self.store,
            self.id,
            self.settings.completion_batch,
            self._stopping,
            on_recorded=self._recorded,
            refill=self if self.flows else None,
        )
        await self._register()
        self.ready.set()
        log.info(
            "worker %s started: flows %s (versions %s), concurrency %d%s, orgs %s",
            self.id,
            ", ".join(sorted(self.flows)) or "none",
            ", ".join(self.versions) or "none",
            self.settings.concurrency,
            self._documents_summary(),
            ", ".join(sorted(self.settings.orgs)) or "all",
            extra={"worker": self.id},
        )
        loops = [
            asyncio.create_task(self._listen(), name="charter-listen"),
            asyncio.create_task(self._heartbeat(), name="charter-heartbeat"),
            asyncio.create_task(self._upkeep(), name="charter-upkeep"),
            asyncio.create_task(self.watchdog.tick(), name="charter-watchdog"),
        ]
        if self.documents is not None:
            loops.append(
                asyncio.create_task(self.documents.run(self._stopping), name="charter-documents")
            )
        completer = asyncio.create_task(self._completer.loop(), name="charter-complete")
        try:
            await self._claim_loop()
            await self._drain_inflight()
        finally:
            await self._completer.finish()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(completer, timeout=self.settings.grace_seconds)
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._call("worker_stopped", {"worker_id": self.id})
            await self.store.close()
            self.executor.shutdown()
            log.info("worker %s stopped: %s", self.id, self.stop_summary(),
                     extra={"worker": self.id})  # fmt: skip

    def stop_summary(self) -> str:
        """What the worker did: its flow tasks (when it serves flows, or ran any), then what
        its documents engine applied, e.g. ``documents engine: applied 3 events, 12 nodes``."""
        parts = []
        if self.flows or self.completed or self.failed or self.documents is None:
            parts.append(f"{self.completed} completed, {self.failed} failed attempts")
        if self.documents is not None:
            parts.append("documents engine: " + self.documents.counts.summary())
        return "; ".join(parts)

    def _documents_summary(self) -> str:
        if self.documents is None:
            return ""
        actions = ", ".join(sorted(self.documents.actions))
        return "; the documents engine" + (f" with actions {actions}" if actions else "")

    @property
    def has_running_threads(self) -> bool:
        return self.executor.has_running_threads

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
        if not self.flows:  # the documents engine alone: nothing to claim here
            await self._stopping.wait()
            return
        backoff = Backoff()
        while not self._stopping.is_set():
            free = self.free_slots
            # Slots whose results wait to be recorded are the completer's to fill: it claims
            # in the same transaction.
            if free <= 0 or (self._completer is not None and self._completer.pending):
                self._slot_freed.clear()
                await self._slot_freed.wait()
                continue
            self._wake.clear()  # before claiming, so a NOTIFY during the claim is not lost
            claim = self._claim_params(min(free, self.settings.batch_size))
            rows: list[dict[str, Any]] = []
            try:
                rows = await self._fetch("claim_tasks", claim)
            except RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("claiming tasks", exc, self._stopping)
                continue
            finally:
                self.refilled(claim, rows)
            backoff.reset()
            if len(rows) < claim["limit"]:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.poll_interval)

    def _recorded(self, outcomes: Sequence[Outcome]) -> None:
        """A group was recorded without claiming: the slots it freed are the claim loop's
        again. The loop claims at once only when the group may have made work claimable (a
        step others depend on, a failure to retry, a directive, a limited step that freed its
        slot, a backlog); otherwise a claim would find nothing, and on an idle machine it
        would hold a core while the callers read their finished runs. New work wakes it
        anyway: every queued task notifies."""
        self._slot_freed.set()
        if self._backlog or not all(
            outcome.succeeded
            and outcome.directive is None
            and (outcome.task.flow, outcome.task.step) not in self._leading
            and (outcome.task.flow, outcome.task.step) not in self._limited
            for outcome in outcomes
        ):
            self._wake.set()

    def _claim_params(self, limit: int) -> dict[str, Any]:
        self._reserved += limit
        return {
            "worker_id": self.id,
            "versions": self.versions,
            "limit": limit,
            "lease_seconds": self.settings.lease_seconds,
        }

    def reserve(self, outcomes: Sequence[Outcome]) -> dict[str, Any] | None:
        """For the completer: a claim for the slots free now, reserved until refilled. Only
        when it will likely find work: while there is a backlog, or when the group completes
        a step others depend on. Otherwise the claim would only hold up the commit that
        tells the callers their runs finished, and the claim loop picks up what comes next."""
        limit = min(self.free_slots, self.settings.batch_size)
        if limit <= 0 or not self.versions or self._stopping.is_set():
            return None
        if not self._backlog and not any(
            outcome.succeeded and (outcome.task.flow, outcome.task.step) in self._leading
            for outcome in outcomes
        ):
            return None
        return self._claim_params(limit)

    def refilled(self, claim: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        """A claim came back (or failed, with no rows): its tasks start, its slots are free."""
        self._reserved -= claim["limit"]
        self._backlog = len(rows) >= claim["limit"]
        for row in rows:
            self._spawn(task_from_row(row))
        if len(rows) < claim["limit"]:
            self._slot_freed.set()  # slots it held and did not fill: the claim loop may use them

    def _spawn(self, task: Task) -> None:
        running = asyncio.create_task(self._execute(task), name=f"charter-task-{task.id}")
        self._inflight[task.id] = (task, running)

    async def _execute(self, task: Task) -> None:
        try:
            outcome = await self.executor.run(task)
        except asyncio.CancelledError:
            return  # lease lost or shutting down: the task comes back through its lease
        except Exception as exc:  # a bug in charter, not in the handler: still fail the task
            log.exception("charter failed while running step %s of run %s", task.label, task.run_id)
            outcome = Outcome(
                task, error=plain_error(FailureKind.WORKER_ERROR, f"{type(exc).__name__}: {exc}")
            )
        finally:
            self._inflight.pop(task.id, None)
            self._slot_freed.set()
        METRICS.steps.labels(
            task.flow, task.step, "completed" if outcome.succeeded else "failed"
        ).observe(outcome.duration)
        if task.id in self._lost:
            self._lost.discard(task.id)
            return
        assert self._completer is not None
        await self._completer.put(outcome)

    # -- listen, heartbeat, upkeep -------------------------------------------------------

    async def _listen(self) -> None:
        backoff = Backoff()
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    pool_conninfo(self.target, "charter-worker-listener"), autocommit=True
                ) as conn:
                    await conn.execute("LISTEN charter_tasks")
                    await conn.execute("LISTEN charter_events")
                    backoff.reset()
                    self._wake.set()  # anything queued while we were not listening
                    if self.documents is not None:
                        self.documents.notified()  # an engine asleep while no one listened
                    async for note in conn.notifies():
                        if note.channel == "charter_events":
                            if self.documents is not None:
                                self.documents.notified()
                        elif note.payload in self.flows:
                            self._wake.set()
            except RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("listening for new tasks", exc, None)
            except Exception:  # never stop listening silently: polling alone is slower
                log.exception("the listener failed; starting it again")
                await backoff.sleep("listening for new tasks", RuntimeError("listener"), None)

    async def _heartbeat(self) -> None:
        interval = max(self.settings.lease_seconds / 3, 0.5)
        while True:
            await asyncio.sleep(interval)
            tasks = [task for task, _ in self._inflight.values()]
            try:
                held = await self._fetch(
                    "extend_leases",
                    {
                        "worker_id": self.id,
                        "task_ids": [t.id for t in tasks],
                        "org_ids": [t.org for t in tasks],
                        "tokens": [t.token for t in tasks],
                        "lease_seconds": self.settings.lease_seconds,
                    },
                )
                await self._refresh_versions()
            except RETRYABLE_DB_ERRORS as exc:
                log.warning("heartbeat failed (%s); retrying", short(exc))
                continue
            except Exception:
                # A heartbeat that died would let every lease lapse: log it and go on.
                self.heartbeat_errors += 1
                log.exception("heartbeat failed; retrying at the next beat")
                continue
            still_held = set(held[0]["extend_leases"]) if held else set()
            for task in tasks:
                if task.id not in still_held and task.id in self._inflight:
                    # Cancelled run or lease taken over: the result would be stale anyway.
                    self._lost.add(task.id)
                    self._inflight[task.id][1].cancel()

    async def _upkeep(self) -> None:
        while True:
            await asyncio.sleep(_UPKEEP_INTERVAL_S)
            try:
                await self._call("ensure_partitions", {})
            except RETRYABLE_DB_ERRORS as exc:
                log.warning("partition upkeep failed (%s); trying again later", short(exc))
            except Exception:
                log.exception("partition upkeep failed; trying again later")

    async def _register(self) -> None:
        rows = await self._fetch(
            "register_worker",
            {
                "worker_id": self.id,
                "hostname": socket.gethostname(),
                "pid": os.getpid(),
                "flows": sorted(self.flows),
                "concurrency": self.settings.concurrency,
                "shapes": self._shapes,
                "lease_seconds": self.settings.lease_seconds,
                "untrusted": self._untrusted(),
            },
        )
        # What it can send: a notification no running worker can is a dead letter at once.
        channels = channel_types(self.settings, self.documents is not None)
        await self._call("set_worker_channels", {"worker_id": self.id, "channels": channels})
        matched = list(rows[0]["register_worker"])
        self.versions = await self._trusted(matched)
        if self.versions != matched:  # record what this worker really serves
            await self._refresh_versions()

    async def _refresh_versions(self) -> None:
        params = {"worker_id": self.id, "shapes": self._shapes, "untrusted": self._untrusted()}
        rows = await self._fetch("refresh_worker_versions", params)
        matched = list(rows[0]["refresh_worker_versions"])
        versions = await self._trusted(matched)
        if versions != matched:  # a version refused just now: leave it out of the record
            params["untrusted"] = self._untrusted()
            await self._fetch("refresh_worker_versions", params)
        if versions != self.versions:
            log.info("worker %s now serves versions %s", self.id, ", ".join(versions) or "none")
            self.versions = versions
            self._wake.set()

    def _untrusted(self) -> list[str]:
        return sorted(v for v, verdict in self._verdicts.items() if verdict is not None)

    async def _trusted(self, versions: list[str]) -> list[str]:
        """The versions whose artifacts check out (WF-07), each verified once."""
        unchecked = [v for v in versions if v not in self._verdicts]
        if unchecked:
            rows = await self._fetch("version_artifacts", {"version_ids": unchecked})
            for row in rows:
                stored = stored_version(row["version_artifacts"])
                verdict = problem(stored)
                self._verdicts[stored.version_id] = verdict
                if verdict is not None:
                    log.error(
                        "version %d of flow '%s' (%s) will not run on this worker: [%s] %s",
                        stored.version,
                        stored.flow,
                        stored.version_id,
                        verdict.code,
                        verdict.message,
                        extra={"worker": self.id, "flow": stored.flow},
                    )
        return [v for v in versions if self._verdicts.get(v) is None]

    # -- database helpers ----------------------------------------------------------------

    async def _fetch(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = await self.store.execute(
            Call(name, params, _as_dicts, dicts=True)
        )
        return rows

    async def _call(self, name: str, params: dict[str, Any]) -> None:
        await self.store.execute(Call(name, params, list))


_LIMITS = {"concurrency", "rateLimit"}  # the claim limits that can pass a queued task over


def served_orgs(orgs: Sequence[str]) -> dict[str, str]:
    """The session setting that narrows a worker's claims and pollers to ``orgs`` (none:
    every org). Each org id is checked as any org id is."""
    if isinstance(orgs, str):
        raise ArgumentError(f"orgs must be a list of org ids, not the string {orgs!r}.")
    named = sorted({text_argument(org, "org id") for org in orgs})
    return {"charter.serve_orgs": json.dumps(named)} if named else {}


def _as_dicts(rows: list[Any]) -> list[dict[str, Any]]:
    return rows
