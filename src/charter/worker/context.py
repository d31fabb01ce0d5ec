"""What a step handler may ask for as its ``ctx`` parameter."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
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


def step_logger(run_id: str, step: str, task_index: int) -> logging.LoggerAdapter[logging.Logger]:
    return logging.LoggerAdapter(
        logging.getLogger("charter.step"),
        {"run_id": run_id, "step": step, "task_index": task_index},
    )
