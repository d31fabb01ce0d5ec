"""The health face of the client."""

from __future__ import annotations

import builtins

from charter.db.store import AsyncStore
from charter.ops import health
from charter.ops.health import HealthReport, StuckInstance, WaitingInstance


class AsyncHealth:
    """Workflow health of the client's org: figures, the stuck detector, its ways out."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def report(self, *, stuck_minutes: int = 10) -> HealthReport:
        """Workers, queues, outboxes, dead letters, p95 step latency (waits left out) and p95 of
        waits by kind, stuck instances."""
        return await self._store.perform(health.health_report(self._org, stuck_minutes))

    async def stuck(self, *, minutes: int = 10) -> builtins.list[StuckInstance]:
        """What should be moving and is not, each with why (``reason``): a task or node not
        run, an event not applied, a timer or timeout not fired, a delivery past its retry
        time (each ``minutes`` overdue), an approval nobody may decide, an instance with
        nothing pending that is not at an end. Waiting for a person is not stuck."""
        return await self._store.perform(health.stuck_instances(self._org, minutes))

    async def waiting_longer_than(
        self, *, hours: float = 0, stuck_minutes: int = 10
    ) -> dict[str, builtins.list[WaitingInstance]]:
        """Instances waiting (not stuck) for ``hours`` or more, by what they wait for:
        ``approval`` and ``transition`` (a person), ``event``, ``timer``, ``delivery``,
        ``task``, ``retry``, ``operator`` (paused)."""
        op = health.waiting_longer_than(self._org, hours, stuck_minutes)
        return await self._store.perform(op)

    async def nudge(self, run_id: str, *, actor: str | None = None) -> bool:
        """Have the engine run the instance again (re-enqueue its advance)."""
        return await self._store.perform(health.nudge_instance(self._org, run_id, actor))

    async def rebuild(self, run_id: str) -> bool:
        """Rebuild the instance's projection from its evidence."""
        return await self._store.perform(health.rebuild_instance(self._org, run_id))

    async def force_fail(self, run_id: str, reason: str, *, actor: str | None = None) -> bool:
        """Fail it (``STUCK_FORCE_FAILED``); ``client.retry(run_id)`` takes it up again."""
        op = health.force_fail_instance(self._org, run_id, reason, actor)
        return await self._store.perform(op)
