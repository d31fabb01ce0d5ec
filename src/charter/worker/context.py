"""What a step handler may ask for as its ``ctx`` parameter."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Context:
    """The handler context.

    ``idempotency_key`` is the same for every attempt of this task (and differs for every
    other task), so pass it to outside services that deduplicate — a payment API, an email
    provider — and a retried attempt cannot do the same thing twice.
    """

    run_id: str
    flow: str
    step: str
    task_index: int
    attempt: int
    idempotency_key: str
    run_input: Any
    inputs: dict[str, Any] = field(default_factory=dict)
    logger: logging.LoggerAdapter[logging.Logger] = field(
        default_factory=lambda: logging.LoggerAdapter(logging.getLogger("charter.step"))
    )
    cost_usd: float = 0.0

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
