"""Runs as Python sees them: ``Run`` and ``StepInfo``, read from ``charter.get_run``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.vocabulary import TERMINAL_RUN_STATUSES, RunStatus, StepStatus


@dataclass(frozen=True)
class StepInfo:
    slug: str
    step_type: str
    status: StepStatus
    tasks: int | None  # 1 for a single step; the element count for a map
    remaining_tasks: int | None
    attempts: int
    started_at: datetime | None
    completed_at: datetime | None
    error: dict[str, Any] | None  # the last failed attempt's, unless the step completed
    output: Any = None  # once completed
    # Instance nodes (a document's workflow): the path, the document version it ran on, who
    # acted, and the edges it chose (its evidence is in output).
    token: str | None = None
    entity_version: int | None = None
    actor: str | None = None
    chosen_edge_ids: list[str] | None = None
    # A queued step's reason to wait: {"kind": "event" | "sleep" | "child" | "rateLimit" |
    # "concurrency" | "time", ...}; None when it is simply next in line (or not queued).
    waiting_for: dict[str, Any] | None = None

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.completed_at is None:
            return None
        return (self.completed_at - self.started_at).total_seconds()


@dataclass(frozen=True)
class ChildInfo:
    """A child run: started by ``ctx.start_child`` (key as given, or ``#n``) or as the body
    of a child step (key ``$body``)."""

    run_id: str
    flow: str
    status: RunStatus
    step: str
    task_index: int
    key: str
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Run:
    id: str
    flow: str
    status: RunStatus
    input: Any
    output: Any
    error: dict[str, Any] | None
    version: int
    version_id: str
    created_at: datetime
    finished_at: datetime | None
    steps: list[StepInfo] = field(default_factory=list)
    usd_cost: float = 0.0
    serving_workers: int = 0  # live workers whose code can run this run's version
    priority: int | None = None
    parent: dict[str, Any] | None = None  # {"runId", "step", "taskIndex", "key"}
    children: list[ChildInfo] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_RUN_STATUSES

    def step(self, slug: str) -> StepInfo:
        for info in self.steps:
            if info.slug == slug:
                return info
        raise KeyError(f"run {self.id} has no step {slug!r}")


def run_from_json(data: dict[str, Any]) -> Run:
    return Run(
        id=data["id"],
        flow=data["flow"],
        status=RunStatus(data["status"]),
        input=data["input"],
        output=data["output"],
        error=data["error"],
        version=data["version"],
        version_id=data["versionId"],
        created_at=timestamp(data["createdAt"]),  # type: ignore[arg-type]
        finished_at=timestamp(data["finishedAt"]),
        steps=[
            StepInfo(
                slug=s["slug"],
                step_type=s["stepType"],
                status=StepStatus(s["status"]),
                tasks=s["tasks"],
                remaining_tasks=s["remainingTasks"],
                attempts=s["attempts"],
                started_at=timestamp(s["startedAt"]),
                completed_at=timestamp(s["completedAt"]),
                error=s["error"],
                output=s.get("output"),
                token=s.get("token"),
                entity_version=s.get("entityVersion"),
                actor=s.get("actor"),
                chosen_edge_ids=s.get("chosenEdgeIds"),
                waiting_for=s.get("waitingFor"),
            )
            for s in data["steps"]
        ],
        usd_cost=float(data.get("usdCost") or 0),
        serving_workers=int(data.get("servingWorkers") or 0),
        priority=data.get("priority"),
        parent=data.get("parent"),
        children=[
            ChildInfo(
                run_id=c["runId"],
                flow=c["flow"],
                status=RunStatus(c["status"]),
                step=c["step"],
                task_index=c["taskIndex"],
                key=c["key"],
                created_at=timestamp(c["createdAt"]),  # type: ignore[arg-type]
                finished_at=timestamp(c["finishedAt"]),
            )
            for c in data.get("children") or []
        ],
    )


def timestamp(value: str | None) -> datetime | None:
    """An ISO 8601 time from charter's JSON, or None."""
    return None if value is None else datetime.fromisoformat(value)


def waiting_text(waiting: dict[str, Any]) -> str:
    """A queued step's reason to wait, in a few words."""
    kind = waiting.get("kind")
    if kind == "event":
        until = f" until {waiting['timeoutAt']}" if waiting.get("timeoutAt") else ""
        return f"waiting for event {waiting['eventKey']}{until}"
    if kind == "child":
        return f"waiting for child run {waiting.get('childRunId')}"
    if kind == "rateLimit":
        return f"waiting for a token of rate limit {waiting['key']} (until {waiting['until']})"
    if kind == "concurrency":
        return (
            f"waiting for a slot of {waiting['key']} ({waiting['running']}/"
            f"{waiting['limit']} running)"
        )
    return f"waiting until {waiting.get('until')}"
