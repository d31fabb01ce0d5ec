"""Registry operations: workflows, their versions, invocations and lineage."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from charter.compiler.flows import compile_shape, is_flow_shape
from charter.db.store import Call, Operation, first_json, single
from charter.errors import ArgumentError, CharterError
from charter.ops.arguments import clean_text
from charter.payloads import json_text, shown

log = logging.getLogger("charter.registry")


OnExisting = Literal["update", "skip", "error"]


Operation_ = Literal["init", "crossover", "mutation", "immigrant"]


T = TypeVar("T")


@dataclass(frozen=True)
class RegistryWarning:
    code: str
    message: str
    severity: str  # INFO or WARN


@dataclass(frozen=True)
class WorkflowResult:
    workflow_id: str
    action: str  # created | updated | skipped
    warnings: list[RegistryWarning] = field(default_factory=list)


@dataclass(frozen=True)
class VersionResult:
    version_id: str
    workflow_id: str
    version: int
    action: str  # created | updated | skipped
    runnable: bool  # the DSL was a flow shape: start_run can run this version
    warnings: list[RegistryWarning] = field(default_factory=list)


@dataclass(frozen=True)
class InvocationResult:
    invocation_id: str
    version_id: str
    workflow_id: str
    action: str  # created | updated
    warnings: list[RegistryWarning] = field(default_factory=list)


@dataclass(frozen=True)
class Invocation:
    invocation_id: str
    version_id: str
    workflow_id: str
    status: str
    start_time: datetime
    end_time: datetime | None
    usd_cost: float
    warnings: list[RegistryWarning] = field(default_factory=list)


@dataclass(frozen=True)
class Lineage:
    version_id: str
    workflow_id: str
    version: int
    operation: str | None
    commit_message: str | None
    generation_id: str | None
    created_at: datetime
    parents: list[Lineage] = field(default_factory=list)

    def ancestors(self) -> list[str]:
        """Every ancestor's version id, nearest first, each once."""
        seen: list[str] = []
        frontier = list(self.parents)
        while frontier:
            node = frontier.pop(0)
            if node.version_id not in seen:
                seen.append(node.version_id)
                frontier.extend(node.parents)
        return seen


def _call(
    name: str, params: dict[str, Any], parse: Callable[[dict[str, Any]], T], *, retry_safe: bool
) -> Operation[T]:
    """A registry call as an operation: one SQL function whose JSON answer ``parse`` reads.
    Calls that upsert are safe to resend; the others are not (a resent create would meet
    its own first attempt)."""
    return single(Call(name, params, lambda rows: parse(first_json(rows)), retry_safe=retry_safe))


def ensure_workflow(
    wf_id: str, description: str, owner_id: str | None, on_existing: OnExisting
) -> Operation[WorkflowResult]:
    return _call(
        "ensure_workflow",
        {
            "wf_id": _optional(wf_id, "wf_id"),
            "description": _optional(description, "description"),
            "owner_id": _optional(owner_id, "owner_id"),
            "on_existing": _optional(on_existing, "on_existing"),
        },
        lambda d: WorkflowResult(d["workflowId"], d["action"], _warnings(d)),
        retry_safe=on_existing != "error",
    )


def create_workflow_version(
    workflow_id: str,
    dsl: Any,
    commit_message: str,
    operation: Operation_,
    *,
    version_id: str | None,
    generation_id: str | None,
    parent_version_ids: Sequence[str],
    owner_id: str | None,
    auto_create_parent: bool,
    on_existing: OnExisting,
) -> Operation[VersionResult]:
    return _call(
        "create_workflow_version",
        {
            "workflow_id": _optional(workflow_id, "workflow_id"),
            "dsl": json_text(dsl, "The dsl"),
            "commit_message": _optional(commit_message, "commit_message"),
            "operation": _optional(operation, "operation"),
            "version_id": _optional(version_id, "version_id"),
            "generation_id": _optional(generation_id, "generation_id"),
            "parent_version_ids": _texts(parent_version_ids, "parent_version_ids"),
            "owner_id": _optional(owner_id, "owner_id"),
            "auto_create_parent": auto_create_parent,
            "on_existing": _optional(on_existing, "on_existing"),
            "compiled": _compiled_shape(workflow_id, dsl),
        },
        lambda d: VersionResult(
            d["versionId"], d["workflowId"], d["version"], d["action"], d["runnable"], _warnings(d)
        ),
        retry_safe=version_id is not None and on_existing != "error",
    )


def _compiled_shape(workflow_id: str, dsl: Any) -> str | None:
    """A flow-shaped DSL's compiled artifact; None for any other DSL, or for a malformed shape
    (SQL then refuses it with the precise reason)."""
    if not is_flow_shape(dsl):
        return None
    try:
        return json_text(compile_shape(workflow_id, dsl), "The compiled workflow")
    except (CharterError, KeyError, TypeError):
        return None


def create_invocation(
    invocation_id: str,
    version_id: str,
    *,
    workflow_id: str | None,
    run_id: str | None,
    generation_id: str | None,
    owner_id: str | None,
    on_existing: Literal["update", "error"],
) -> Operation[InvocationResult]:
    return _call(
        "create_invocation",
        {
            "invocation_id": _optional(invocation_id, "invocation_id"),
            "version_id": _optional(version_id, "version_id"),
            "workflow_id": _optional(workflow_id, "workflow_id"),
            "run_id": _optional(run_id, "run_id"),
            "generation_id": _optional(generation_id, "generation_id"),
            "owner_id": _optional(owner_id, "owner_id"),
            "on_existing": _optional(on_existing, "on_existing"),
        },
        lambda d: InvocationResult(
            d["invocationId"], d["versionId"], d["workflowId"], d["action"], _warnings(d)
        ),
        retry_safe=on_existing != "error",
    )


def update_invocation(
    invocation_id: str, *, status: str | None, end_time: datetime | None, usd_cost: float | None
) -> Operation[Invocation]:
    return _call(
        "update_invocation",
        {
            "invocation_id": _optional(invocation_id, "invocation_id"),
            "status": _optional(status, "status"),
            "end_time": _end_time(end_time),
            "usd_cost": _cost(usd_cost),
        },
        lambda d: Invocation(
            d["invocationId"],
            d["versionId"],
            d["workflowId"],
            d["status"],
            datetime.fromisoformat(d["startTime"]),
            datetime.fromisoformat(d["endTime"]) if d["endTime"] else None,
            float(d["usdCost"]),
            _warnings(d),
        ),
        retry_safe=True,
    )


def lineage(version_id: str) -> Operation[Lineage]:
    return _call(
        "workflow_lineage",
        {"version_id": _optional(version_id, "version_id")},
        _lineage_from_json,
        retry_safe=True,
    )


def _lineage_from_json(d: dict[str, Any]) -> Lineage:
    return Lineage(
        d["versionId"],
        d["workflowId"],
        d["version"],
        d["operation"],
        d["commitMessage"],
        d["generationId"],
        datetime.fromisoformat(d["createdAt"]),
        [_lineage_from_json(p) for p in d["parents"]],
    )


def _optional(value: Any, name: str) -> str | None:
    return None if value is None else clean_text(value, name)


def _texts(values: Any, name: str) -> list[str]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ArgumentError(f"{name} must be a list of version ids, not {type(values).__name__}.")
    return [clean_text(value, name) for value in values]


def _end_time(value: Any) -> datetime | None:
    if value is not None and not isinstance(value, datetime):
        raise ArgumentError(f"end_time must be a datetime or None, not {type(value).__name__}.")
    return value


def _cost(value: Any) -> float | None:
    if value is None:
        return None
    try:
        cost = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        cost = math.nan
    if not isinstance(value, int | float) or not math.isfinite(cost):
        raise ArgumentError(f"usd_cost must be a finite number of dollars, not {shown(value, 40)}.")
    return cost


def _warnings(data: dict[str, Any]) -> list[RegistryWarning]:
    warnings = [
        RegistryWarning(w["code"], w["message"], w["severity"]) for w in data.get("warnings", [])
    ]
    for warning in warnings:
        log.log(
            logging.WARNING if warning.severity == "WARN" else logging.INFO,
            "%s: %s",
            warning.code,
            warning.message,
        )
    return warnings
