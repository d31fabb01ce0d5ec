"""Retention inside ``charter worker``: ``charter.run_maintenance`` once an interval (hourly
by default; one worker at a time, the others find it running and skip). It forgets finished
flow runs and delivered outbox rows past the window; a document's evidence is kept for good
(archiving it is the owner's ``charter maintenance --archive-before``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from charter import settings
from charter.db.store import AsyncStore, Call, first_value

log = logging.getLogger("charter.worker")

FIRST_RUN_AFTER = 60.0  # seconds after start: a worker that restarts in a loop does no harm


@dataclass
class Maintenance:
    store: AsyncStore
    retention_days: int = field(default_factory=settings.retention_days)
    interval: float = field(default_factory=settings.maintenance_interval)
    last_report: dict[str, Any] | None = None

    async def run(self, stopping: asyncio.Event) -> None:
        if self.interval <= 0:
            return
        delay = min(FIRST_RUN_AFTER, self.interval)
        while not stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), delay)
            if stopping.is_set():
                return
            delay = self.interval
            try:
                await self.run_once()
            except Exception:  # retention can wait for the next round
                log.exception("maintenance failed; trying again in %.0f s", self.interval)

    async def run_once(self) -> dict[str, Any]:
        report: dict[str, Any] = await self.store.execute(
            Call("run_maintenance", {"retention_days": self.retention_days}, first_value)
        )
        self.last_report = report
        if (
            report.get("partitionsDropped")
            or any(report.get("receiptsPruned", {}).values())
            or any(report.get("flowRunsForgotten", {}).values())
        ):
            log.info("maintenance: %s", report)
        return report
