"""Health operations: stuck, waiting and failed instances, and repairing them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.db.store import Call, Operation, first_json, first_value, json_rows
from charter.errors import ArgumentError, with_code
from charter.ops.arguments import text_argument
from charter.ops.run_model import timestamp

# Why an entry is stuck, and what an operator does about it.
STUCK_REASONS = {
    "task_overdue": "a task ready and not claimed, or claimed past its lease: is a worker "
    "running that serves it?",
    "node_not_run": "a node ready that the engine has not run: nudge it",
    "event_not_applied": "a document event not applied: is the documents engine running, "
    "and what is the event's error?",
    "timer_overdue": "a timer, retry or escalation due and not fired: is the documents engine "
    "running?",
    "timeout_overdue": "an event wait's timeout passed and not fired: is the documents engine "
    "running?",
    "delivery_overdue": "a side effect past its retry time: is a delivery worker running?",
    "approval_undecidable": "an approval nobody may decide: give the role to someone who may, "
    "or force-fail and retry",
    "nothing_pending": "running with nothing pending and not at an end: rebuild, nudge or "
    "force-fail",
}


# What a waiting instance waits for (none of it is trouble).
WAIT_KINDS = ("approval", "transition", "event", "timer", "delivery", "task", "retry", "operator")


@dataclass(frozen=True)
class StuckInstance:
    """Something that should be moving and is not: an instance (``kind`` ``"instance"``) or
    a flow run (``"flow"``: no document). ``reason`` is the first of ``reasons`` (each with
    its node, since when and detail); :data:`STUCK_REASONS` says what each means."""

    run_id: str | None
    document_id: str | None
    entity_type: str | None
    current_nodes: list[str]
    updated_at: datetime | None
    idle_seconds: float
    reason: str = "nothing_pending"
    reasons: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "instance"
    since: datetime | None = None


def _stuck(data: dict[str, Any]) -> StuckInstance:
    return StuckInstance(
        run_id=data.get("runId"),
        document_id=data.get("documentId"),
        entity_type=data.get("entityType"),
        current_nodes=list(data.get("currentNodes") or []),
        updated_at=timestamp(data.get("updatedAt")),
        idle_seconds=float(data["idleSeconds"]),
        reason=data.get("reason") or "nothing_pending",
        reasons=list(data.get("reasons") or []),
        kind=data.get("kind") or "instance",
        since=timestamp(data.get("since")),
    )


@dataclass(frozen=True)
class WaitingInstance:
    """An instance waiting, not stuck: for a person (``approval``, ``transition``), an
    ``event``, a ``timer`` not yet due, a ``delivery`` in backoff, a ``task``, a ``retry``,
    or an ``operator`` (paused); since when, and the wait's detail."""

    run_id: str
    document_id: str
    entity_type: str
    kind: str
    node: str | None
    since: datetime | None
    waiting_seconds: float
    due_at: datetime | None
    status: str
    detail: dict[str, Any] = field(default_factory=dict)


def _waiting(data: dict[str, Any]) -> WaitingInstance:
    return WaitingInstance(
        run_id=data["runId"],
        document_id=data["documentId"],
        entity_type=data["entityType"],
        kind=data["kind"],
        node=data.get("node"),
        since=timestamp(data.get("since")),
        waiting_seconds=float(data["waitingSeconds"]),
        due_at=timestamp(data.get("dueAt")),
        status=data["status"],
        detail=dict(data.get("detail") or {}),
    )


@dataclass(frozen=True)
class FailedInstance:
    """A failed instance and why: the node it failed at and its error's code (e.g.
    ``APPROVERS_EMPTY``: an approval nobody may decide)."""

    run_id: str
    document_id: str
    entity_type: str
    node: str | None
    code: str | None
    message: str | None
    failed_at: datetime | None


def _failed(data: dict[str, Any]) -> FailedInstance:
    error = with_code({k: data.get(k) for k in ("code", "sqlstate")}) or {}
    return FailedInstance(
        run_id=data["runId"],
        document_id=data["documentId"],
        entity_type=data["entityType"],
        node=data.get("node"),
        code=error.get("code"),
        message=data.get("message"),
        failed_at=timestamp(data.get("failedAt")),
    )


@dataclass(frozen=True)
class HealthReport:
    """One org's health: ``raw`` is the whole report as the database computed it."""

    org_id: str
    workers_alive: int
    flow_queues: list[dict[str, Any]]
    document_events: dict[str, Any]
    side_effects: dict[str, Any]
    instances: dict[str, Any]
    step_latency_p95_ms: float | None
    stuck_minutes: int
    stuck: list[StuckInstance]
    raw: dict[str, Any]
    failures: list[FailedInstance] = field(default_factory=list)  # the latest, newest first
    # Waits that ended in the last hour, 95th percentile in ms by what they waited for
    # ("approval", "transition", "timer", "event", "delivery"); step_latency_p95_ms leaves
    # them out.
    wait_latency_p95_ms: dict[str, float] = field(default_factory=dict)
    waiting: dict[str, Any] = field(default_factory=dict)  # {"instances": n, "byKind": {...}}
    dead_letters: int = 0  # both outboxes' (document events and side effects)


def _minutes(minutes: Any) -> int:
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 0:
        raise ArgumentError(f"minutes must be a whole number of 0 or more, not {minutes!r:.40}.")
    return minutes


def health_report(org_id: str, minutes: int) -> Operation[HealthReport]:
    params = {"org_id": org_id, "minutes": _minutes(minutes)}
    data = yield Call("health_report", params, first_json)
    return HealthReport(
        org_id=data["orgId"],
        workers_alive=data["workersAlive"],
        flow_queues=data["flowQueues"],
        document_events=data["documentEvents"],
        side_effects=data["sideEffects"],
        instances=data["instances"],
        step_latency_p95_ms=data.get("stepLatencyP95Ms"),
        stuck_minutes=data["stuckMinutes"],
        stuck=[_stuck(s) for s in data["stuck"]],
        raw=data,
        failures=[_failed(f) for f in data.get("failures") or []],
        wait_latency_p95_ms=dict(data.get("waitLatencyP95Ms") or {}),
        waiting=data.get("waiting") or {"instances": 0, "byKind": {}},
        dead_letters=int(data.get("deadLetters") or 0),
    )


def stuck_instances(org_id: str, minutes: int) -> Operation[list[StuckInstance]]:
    params = {"org_id": org_id, "minutes": _minutes(minutes)}
    rows = yield Call("stuck_instances", params, json_rows)
    return [_stuck(row) for row in rows]


def _hours(hours: Any) -> float:
    if (
        isinstance(hours, bool)
        or not isinstance(hours, int | float)
        or not 0 <= hours <= 1_000_000  # also refuses NaN
    ):
        raise ArgumentError(
            f"hours must be a number from 0 to 1000000 (0: every wait), not {hours!r:.40}."
        )
    return float(hours)


def waiting_longer_than(
    org_id: str, hours: float, stuck_minutes: int = 10
) -> Operation[dict[str, list[WaitingInstance]]]:
    """The waits of instances that are not stuck, begun ``hours`` ago or more, by kind."""
    params = {"org_id": org_id, "hours": _hours(hours), "minutes": _minutes(stuck_minutes)}
    rows = yield Call("waiting_instances", params, json_rows)
    grouped: dict[str, list[WaitingInstance]] = {}
    for row in rows:
        wait = _waiting(row)
        grouped.setdefault(wait.kind, []).append(wait)
    return grouped


def nudge_instance(org_id: str, run_id: str, actor: str | None) -> Operation[bool]:
    params = {"org_id": org_id, "run_id": text_argument(run_id, "run_id"), "actor": actor}
    return bool((yield Call("nudge_instance", params, first_value)))


def force_fail_instance(
    org_id: str, run_id: str, reason: str, actor: str | None
) -> Operation[bool]:
    params = {
        "org_id": org_id,
        "run_id": text_argument(run_id, "run_id"),
        "reason": text_argument(reason, "reason"),
        "actor": actor,
    }
    return bool((yield Call("force_fail_instance", params, first_value)))


def rebuild_instance(org_id: str, run_id: str) -> Operation[bool]:
    params = {"org_id": org_id, "run_id": text_argument(run_id, "run_id")}
    return bool((yield Call("rebuild_instance", params, first_value)))
