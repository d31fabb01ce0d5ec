"""The schedules face of the client."""

from __future__ import annotations

from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import schedules as schedules_ops
from charter.ops.schedules import Schedule


class AsyncSchedules:
    """Cron schedules of the org: each tick starts a flow run, creates a document, or passes
    a gate for every document that can pass it; exactly once per tick across all workers."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def put(
        self,
        name: str,
        cron: str,
        *,
        flow: Any = None,
        input: Any = None,
        entity_type: str | None = None,
        action: str | None = None,
        missed: str = "latest",
        timezone: str = "UTC",
        connection: AsyncConnection | None = None,
    ) -> Schedule:
        """Create or replace schedule ``name``: ``flow=`` (a Flow or slug) with ``input=``,
        or ``entity_type=`` with ``action="create"`` (``input`` = the document's fields) or a
        gate. ``missed``: latest | all | skip (ticks missed while no worker ran)."""
        op = schedules_ops.put_schedule(
            self._org, name, cron, flow=flow, input=input, entity_type=entity_type,
            action=action, missed=missed, timezone=timezone,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def list(self, *, connection: AsyncConnection | None = None) -> list[Schedule]:
        return await self._store.perform(schedules_ops.list_schedules(self._org), connection)

    async def delete(self, name: str, *, connection: AsyncConnection | None = None) -> bool:
        return await self._store.perform(schedules_ops.delete_schedule(self._org, name), connection)
