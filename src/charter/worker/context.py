"""What a step handler may ask for as its ``ctx`` parameter."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from charter.dsl.outcomes import Reschedule
from charter.payloads import json_text

if TYPE_CHECKING:
    from charter.dsl.flow import Flow


@dataclass(frozen=True)
class ChildRun:
    """A child run asked for by ``ctx.start_child``; it starts when the attempt finishes."""

    run_id: str
    flow: str
    key: str


def child_run_id(run_id: str, step: str, task_index: int, key: str) -> str:
    """The child's run id, as SQL's charter._child_run_id makes it."""
    digest = hashlib.md5(f"{run_id}/{step}/{task_index}/{key}".encode(), usedforsecurity=False)
    return str(uuid.UUID(digest.hexdigest()))


@dataclass
class Context:
    """The handler context.

    ``idempotency_key`` is the same for every attempt of this task (and differs for every
    other task, in every org), so pass it to outside services that deduplicate — a payment
    API, an email provider — and a retried attempt cannot do the same thing twice.
    ``org_id`` is the run's org: a run is named by its org and its id (``run_id`` is unique
    within the org).
    """

    run_id: str
    flow: str
    step: str
    task_index: int
    attempt: int
    idempotency_key: str
    run_input: Any
    inputs: dict[str, Any] = field(default_factory=dict)
    org_id: str = "default"
    logger: logging.LoggerAdapter[logging.Logger] = field(
        default_factory=lambda: logging.LoggerAdapter(logging.getLogger("charter.step"))
    )
    cost_usd: float = 0.0
    children: list[dict[str, Any]] = field(default_factory=list)

    def start_child(self, flow: Flow | str, input: Any = None, key: str | None = None) -> ChildRun:
        """Start a run of ``flow`` as a child of this run. It starts when this attempt
        finishes (completes or reschedules), in the same transaction, so an attempt that
        fails or is lost starts nothing; and it is idempotent per (this task, ``key``): a
        retried attempt finds the child it started before. Without ``key`` the n-th call of
        an attempt has the key ``#n``. Cancelling this run cancels its children."""
        slug = flow.slug if not isinstance(flow, str) else flow
        if not isinstance(slug, str) or not slug:
            raise ValueError(f"start_child needs a Flow or a flow slug, got {flow!r}")
        if key is not None and (not isinstance(key, str) or not 1 <= len(key) <= 200):
            raise ValueError(
                f"start_child key must be a string of 1 to 200 characters, got {key!r}"
            )
        chosen = key if key is not None else f"#{len(self.children) + 1}"
        if any(child["key"] == chosen for child in self.children):
            raise ValueError(
                f"start_child was called twice with key {chosen!r} in one attempt; give "
                "each child its own key"
            )
        text = json_text(input, f"The input of the child run {chosen!r}")
        self.children.append({"flow": slug, "input": json.loads(text), "key": chosen})
        rid = child_run_id(self.run_id, self.step, self.task_index, chosen)
        return ChildRun(run_id=rid, flow=slug, key=chosen)

    def sleep_until(self, when: datetime) -> None:
        """Stop here and resume this task at ``when`` (timezone-aware), holding no worker
        meanwhile: the handler runs again from the start then. Not counted as an attempt."""
        raise Reschedule(at=when)

    def add_cost(self, usd: float) -> None:
        """Report what this attempt cost (say, a model call's price); the run's
        ``usd_cost`` adds it up, for failed attempts too."""
        if isinstance(usd, bool) or not isinstance(usd, int | float) or not math.isfinite(usd):
            raise ValueError(f"add_cost needs a finite number of dollars, got {usd!r}")
        if usd < 0:
            raise ValueError(f"add_cost needs a cost of 0 or more, got {usd!r}")
        self.cost_usd += usd


def step_logger(
    run_id: str, flow: str, step: str, task_index: int, attempt: int
) -> logging.LoggerAdapter[logging.Logger]:
    """``ctx.logger``: records on ``charter.step`` that carry the run, flow, step, task
    index and attempt as attributes (``record.run_id`` …), for formatters and JSON logs."""
    return logging.LoggerAdapter(
        logging.getLogger("charter.step"),
        {
            "run_id": run_id,
            "flow": flow,
            "step": step,
            "task_index": task_index,
            "attempt": attempt,
        },
    )
