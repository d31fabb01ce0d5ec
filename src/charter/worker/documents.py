"""The documents engine inside ``charter worker``: applies the events outbox to workflow
instances, resumes waits that are due (seed 002 § Outbox Worker Query Contract), runs the
worker's ``@charter.action`` handlers, fires due schedules, delivers the side-effects
outbox and runs seed 003's tasks (:mod:`charter.worker.deliveries`), and keeps retention
(:mod:`charter.worker.maintenance`).

One loop: claim a batch of document events (``FOR UPDATE SKIP LOCKED``, status
``processing`` with a lease), apply them (each in its own subtransaction: completed, or
failed with backoff, or dead-lettered), resume the waits whose time came (timers, events
that arrived, timeouts, confirmed deliveries), then wait for ``NOTIFY charter_events`` or
the poll interval. Everything an instance does happens in SQL under the document's lock;
this loop only decides when to ask.

WF-07: before the engine touches a workflow version it must have been verified here (hash
and compiler version); the SQL refuses versions missing from the verified list, and fails
instances of versions this worker refused, naming why.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from charter import tracing
from charter.backoff import Backoff
from charter.db.store import AsyncStore, Call, first_value, json_rows
from charter.dsl.actions import ActionContext, ActionHandler
from charter.errors import CompiledWorkflowError
from charter.ops.compiled_artifacts import problem, stored_version
from charter.ops.run_model import timestamp
from charter.payloads import json_text
from charter.worker.completion import RETRYABLE_DB_ERRORS
from charter.worker.deliveries import Channels, SideEffectDelivery
from charter.worker.engine_sleep import EngineSleep, Sleeper
from charter.worker.maintenance import Maintenance

if TYPE_CHECKING:
    from charter.worker.runner import WorkerSettings

log = logging.getLogger("charter.worker")

_VERIFY_INTERVAL_S = 5.0
# How soon to look again while writers of events that will not notify are open (doubling).
_LOOK_AGAIN_S = 0.02


@dataclass
class EngineCounts:
    """What this worker's documents engine did since it started."""

    applied: int = 0  # document events applied
    failed: int = 0  # attempts at an event that failed (it is retried with backoff)
    nodes: int = 0  # workflow nodes it finished (completed, failed, skipped, cancelled)
    resumed: int = 0  # waits resumed (timers, events, deliveries, decisions, handlers)
    actions: int = 0  # @charter.action handler tasks run
    ticks: int = 0  # schedule ticks fired

    def summary(self) -> str:
        """E.g. ``applied 3 events, 12 nodes, 2 waits resumed``."""
        parts = [f"applied {self.applied} events, {self.nodes} nodes"]
        parts += [f"{self.resumed} waits resumed"] if self.resumed else []
        parts += [f"{self.failed} failed event attempts"] if self.failed else []
        parts += [f"{self.actions} actions"] if self.actions else []
        parts += [f"{self.ticks} schedule ticks"] if self.ticks else []
        return ", ".join(parts)


def _default_settings() -> WorkerSettings:
    from charter.worker.runner import WorkerSettings  # the runner imports this module

    return WorkerSettings()


@dataclass
class DocumentsEngine:
    store: AsyncStore
    worker_id: str
    batch_size: int = 100
    lease_seconds: int = 30
    poll_interval: float = 0.2
    actions: dict[str, ActionHandler] = field(default_factory=dict)
    # The worker's settings, for the channels its side effects go out on (the environment's
    # when None).
    settings: WorkerSettings | None = None
    counts: EngineCounts = field(default_factory=EngineCounts)
    deliveries: SideEffectDelivery | None = None
    maintenance: Maintenance | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    # The delivery loop's own wake-up: each loop clears its event before it looks, so one
    # loop's unread wake-up never keeps the other polling.
    effects_wake: asyncio.Event = field(default_factory=asyncio.Event)
    # Whether the engine may sleep until notified (worker/engine_sleep.py); made in run().
    sleep: Sleeper = field(default=None)  # type: ignore[assignment]
    _verdicts: dict[str, CompiledWorkflowError | None] = field(default_factory=dict)
    _verified_at: float = -1e9
    _look_again: float = _LOOK_AGAIN_S

    async def run(self, stopping: asyncio.Event) -> None:
        # Side effects go out on their own loop: a slow receiver never holds up the engine.
        self.deliveries = SideEffectDelivery(
            self.store,
            self.worker_id,
            Channels.from_settings(self.settings or _default_settings()),
            self.lease_seconds,
        )
        self.maintenance = Maintenance(self.store)
        if self.sleep is None:
            self.sleep = EngineSleep(self.store)
        loops = [
            asyncio.create_task(
                self.deliveries.run(stopping, self.effects_wake, self.poll_interval),
                name="charter-side-effects",
            ),
            asyncio.create_task(self.maintenance.run(stopping), name="charter-maintenance"),
        ]
        try:
            await self._engine_loop(stopping)
        finally:
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await self.deliveries.close()

    def notified(self) -> None:
        """NOTIFY charter_events: new events, and maybe new side effects, are waiting."""
        self.wake.set()
        self.effects_wake.set()

    async def _engine_loop(self, stopping: asyncio.Event) -> None:
        backoff = Backoff()
        self._look_again = _LOOK_AGAIN_S
        try:
            while not stopping.is_set():
                self.wake.clear()
                try:
                    busy = await self.step()
                    backoff.reset()
                    await self._rest(busy)
                except RETRYABLE_DB_ERRORS as exc:
                    await backoff.sleep("applying document events", exc, stopping)
                except Exception:  # never let the engine stop silently
                    log.exception("the documents engine failed; trying again")
                    failed = RuntimeError("engine")
                    await backoff.sleep("applying document events", failed, stopping)
        finally:
            await self.sleep.close()

    async def _rest(self, busy: bool) -> None:
        """After a round: look again at once, soon, or after sleeping until notified."""
        if busy:
            await self.sleep.woke()
            # The round may have queued side effects; its own NOTIFY was skipped while no
            # engine slept, so the delivery loop is told here.
            self.effects_wake.set()
            self._look_again = _LOOK_AGAIN_S
            return
        if not self.sleep.asleep:
            state = await self.sleep.try_sleep()
            if state == "asleep":
                self._look_again = _LOOK_AGAIN_S
                return  # writers notify from now on: one more look, then sleep
            if state == "writing":
                # Writers of events that will not notify are open: look again soon, and
                # less often while they stay open (a long transaction around a mutation).
                await self._wait(min(self._look_again, self.poll_interval))
                self._look_again *= 2
                return
        if await self._wait(self.poll_interval):
            await self.sleep.woke()

    async def _wait(self, timeout: float) -> bool:
        """Until NOTIFY charter_events (True) or the timeout (False)."""
        try:
            await asyncio.wait_for(self.wake.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def step(self) -> bool:
        """One round: events, then due waits. True when there was work (look again at once)."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._verified_at > _VERIFY_INTERVAL_S:
            await self.verify_versions()
        claimed = await self.store.execute(
            Call(
                "claim_document_events",
                {
                    "worker_id": self.worker_id,
                    "limit": self.batch_size,
                    "lease_seconds": self.lease_seconds,
                },
                first_value,
            )
        )
        if claimed:
            await self.verify_versions()  # an event may start an instance of a new version
            traces = await self._event_traces(claimed)
            result = await self.store.execute(
                Call(
                    "apply_document_events",
                    {"events": Jsonb(claimed), **self._verdict_params()},
                    first_value,
                    retry_safe=False,
                    what="applying document events",
                )
            )
            self.counts.applied += result["applied"]
            self.counts.failed += result["failed"]
            self.counts.nodes += result["nodes"]
            if traces:
                await self._report_traces(traces)
            if result["failed"]:
                log.warning(
                    "%d of %d document events failed; they are retried with backoff",
                    result["failed"],
                    len(claimed),
                    extra={"worker": self.worker_id},
                )
        fired = await self.store.execute(
            Call(
                "fire_due_waits",
                {"limit": self.batch_size, **self._verdict_params()},
                first_value,
                retry_safe=False,
                what="resuming due waits",
            )
        )
        resumed = fired["fired"]
        self.counts.resumed += resumed
        self.counts.nodes += fired["nodes"]
        ran = await self.run_actions() if self.actions else 0
        ticks = await self.store.execute(
            Call("fire_due_schedules", {"limit": 20}, first_value, retry_safe=False)
        )
        self.counts.ticks += ticks or 0
        return bool(claimed) or bool(resumed) or bool(ran) or bool(ticks)

    async def _event_traces(self, claimed: Any) -> list[dict[str, Any]]:
        """The claimed events' trace ids (only when OpenTelemetry is installed)."""
        if not tracing.enabled():
            return []
        rows = await self.store.execute(Call("event_traces", {"events": Jsonb(claimed)}, json_rows))
        return list(rows)

    async def _report_traces(self, traces: list[dict[str, Any]]) -> None:
        """A span per applied event on its trace, and one per node it ran, read back from
        the evidence (the engine runs in SQL; the evidence has each node's times)."""
        ended = datetime.now(UTC)
        since = min(timestamp(t["at"]) or ended for t in traces)
        documents = [{"orgId": t["orgId"], "documentId": t["documentId"]} for t in traces]
        nodes = await self.store.execute(
            Call("trace_nodes", {"documents": Jsonb(documents), "since": since}, json_rows)
        )
        by_document: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for node in nodes:
            by_document.setdefault((node["orgId"], node["documentId"]), []).append(node)
        for event in traces:
            advance = tracing.record(
                "charter.advance", event["traceId"], timestamp(event["at"]), ended,
                {"charter.document": event["documentId"], "charter.event": event["eventType"],
                 "charter.entity_type": event["entityType"], "charter.worker": self.worker_id},
            )  # fmt: skip
            for node in by_document.pop((event["orgId"], event["documentId"]), []):
                tracing.record(
                    f"charter.node {node['nodeType'] or 'node'}", event["traceId"],
                    timestamp(node.get("startedAt")), timestamp(node.get("finishedAt")),
                    {"charter.node": node["node"], "charter.run": node["runId"],
                     "charter.status": node["status"]},
                    parent=advance,
                )  # fmt: skip

    async def run_actions(self) -> int:
        """Claim the handler tasks of this worker's @charter.action handlers and run them."""
        tasks = await self.store.execute(
            Call(
                "claim_action_tasks",
                {
                    "worker_id": self.worker_id,
                    "action_types": sorted(self.actions),
                    "limit": self.batch_size,
                    "lease_seconds": self.lease_seconds,
                },
                json_rows,
            )
        )
        await asyncio.gather(*(self._run_action(task) for task in tasks))
        return len(tasks)

    async def _run_action(self, task: dict[str, Any]) -> None:
        handler = self.actions[task["actionType"]]
        ctx = ActionContext(
            action_type=task["actionType"],
            run_id=task["runId"],
            node_id=task["nodeId"],
            document_id=task["documentId"],
            org_id=task["orgId"],
            entity_version=task["entityVersion"],
            payload=task.get("payload") or {},
            idempotency_key=task["idempotencyKey"],
            attempt=task["attempt"],
            logger=logging.getLogger(f"charter.action.{task['actionType']}"),
        )
        patch: Any = None
        error: dict[str, Any] | None = None
        permanent = False
        try:
            if inspect.iscoroutinefunction(handler):
                patch = await handler(task["document"], ctx)
            else:
                patch = await asyncio.to_thread(handler, task["document"], ctx)
            if patch is not None and not isinstance(patch, dict):
                raise TypeError(
                    f"an action handler returns a dict of fields to set (or None), not "
                    f"{type(patch).__name__}"
                )
            json_text(patch or {}, "action result")
        except Exception as exc:
            permanent = getattr(exc, "permanent", False) is True or isinstance(exc, TypeError)
            error = {
                "type": type(exc).__name__,
                "message": str(exc)[:2000],
                "traceback": traceback.format_exc()[-8000:],
            }
            log.warning(
                "action %s at %s (attempt %d) failed: %s",
                ctx.action_type,
                ctx.node_id,
                ctx.attempt,
                exc,
                extra={"worker": self.worker_id, "run_id": ctx.run_id},
            )
        await self.store.execute(
            Call(
                "finish_action_task",
                {
                    **self._verdict_params(),
                    "run_id": ctx.run_id,
                    "org_id": ctx.org_id,
                    "node_id": ctx.node_id,
                    "patch": None if error else Jsonb(patch or {}),
                    "error": Jsonb(error) if error else None,
                    "permanent": permanent,
                },
                first_value,
                retry_safe=True,  # fenced by the worker id: a resend finds it answered
            )
        )
        self.counts.actions += 1

    async def verify_versions(self) -> None:
        """Verify (WF-07) every contracted workflow version not judged yet."""
        self._verified_at = asyncio.get_running_loop().time()
        # Refused versions are judged again: `charter recompile` may have mended them.
        trusted = sorted(v for v, verdict in self._verdicts.items() if verdict is None)
        rows = await self.store.execute(Call("engine_versions", {"known": trusted}, json_rows))
        for row in rows:
            version = stored_version(row)
            verdict = problem(version)
            known = version.version_id in self._verdicts
            self._verdicts[version.version_id] = verdict
            if verdict is not None and not known:
                log.error(
                    "version %d of workflow '%s' (%s) will not run until it is mended: [%s] %s",
                    version.version,
                    version.flow,
                    version.version_id,
                    verdict.code,
                    verdict.message,
                    extra={"worker": self.worker_id},
                )

    def _verdict_params(self) -> dict[str, Any]:
        return {
            "verified": sorted(v for v, verdict in self._verdicts.items() if verdict is None),
            "refused": Jsonb(
                {
                    v: f"[{verdict.code}] {verdict.message}"
                    for v, verdict in self._verdicts.items()
                    if verdict is not None
                }
            ),
            "worker_id": self.worker_id,
        }
