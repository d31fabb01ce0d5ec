"""Workers and the queue: what Python sees of them, and the operations that list them
(`charter workers`, `charter queue`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from charter.db.store import Call, Operation, json_rows
from charter.errors import (
    ArgumentError,
)
from charter.payloads import shown

# How long a dead worker (its heartbeat lapsed without a clean stop) stays in the list of
# workers after its last heartbeat: `charter workers --dead-after`, $CHARTER_DEAD_WORKER_SECONDS,
# client.workers(dead_after_seconds=). list_workers() in SQL has the same default.
DEAD_WORKER_SECONDS = 900


@dataclass(frozen=True)
class WorkerInfo:
    id: str
    hostname: str
    pid: int
    flows: list[str]
    versions: list[str]  # the flow versions its code can run
    orgs: list[str] | None  # the orgs it serves (charter worker --org); None is every org
    concurrency: int
    claimed: int  # tasks it holds now
    alive: bool  # heartbeat within its lease, not stopped
    started_at: datetime
    last_heartbeat_at: datetime
    stopped_at: datetime | None


@dataclass(frozen=True)
class QueueEntry:
    flow: str
    version_id: str
    version: int
    ready: int  # may run now
    scheduled: int  # waiting for a retry delay or a start delay
    running: int
    oldest_ready_seconds: float | None
    serving_workers: int  # live workers whose code runs this version


def worker_info(data: dict[str, Any]) -> WorkerInfo:
    return WorkerInfo(
        id=data["id"],
        hostname=data["hostname"],
        pid=data["pid"],
        flows=list(data["flows"]),
        versions=list(data["versions"]),
        orgs=None if data["orgs"] is None else list(data["orgs"]),
        concurrency=data["concurrency"],
        claimed=data["claimed"],
        alive=data["alive"],
        started_at=datetime.fromisoformat(data["startedAt"]),
        last_heartbeat_at=datetime.fromisoformat(data["lastHeartbeatAt"]),
        stopped_at=datetime.fromisoformat(data["stoppedAt"]) if data["stoppedAt"] else None,
    )


def queue_entry(data: dict[str, Any]) -> QueueEntry:
    return QueueEntry(
        flow=data["flow"],
        version_id=data["versionId"],
        version=data["version"],
        ready=data["ready"],
        scheduled=data["scheduled"],
        running=data["running"],
        oldest_ready_seconds=data["oldestReadySeconds"],
        serving_workers=data["servingWorkers"],
    )


def list_workers(
    include_stopped: bool, dead_after_seconds: int | None = None
) -> Operation[list[WorkerInfo]]:
    if not isinstance(include_stopped, bool):
        raise ArgumentError(
            f"include_stopped must be True or False, not {type(include_stopped).__name__}."
        )
    if dead_after_seconds is not None and (
        isinstance(dead_after_seconds, bool)
        or not isinstance(dead_after_seconds, int)
        or not 0 <= dead_after_seconds <= 2**31 - 1
    ):
        raise ArgumentError(
            f"dead_after_seconds={shown(dead_after_seconds)} must be a whole number of seconds "
            "from 0 (a dead worker leaves the list at once) to 2147483647, or None for the "
            f"default ({DEAD_WORKER_SECONDS})."
        )
    params = {"include_stopped": include_stopped, "dead_after_seconds": dead_after_seconds}
    rows = yield Call("list_workers", params, json_rows)
    return [worker_info(data) for data in rows]


def queue() -> Operation[list[QueueEntry]]:
    rows = yield Call("queue_stats", {}, json_rows)
    return [queue_entry(data) for data in rows]
