"""A claimed task, what became of it, and errors recorded as JSON."""

from __future__ import annotations

import traceback
import uuid
from dataclasses import dataclass
from typing import Any

from charter import payloads
from charter.errors import CharterError

MAX_MESSAGE = 2_000
MAX_TRACEBACK = 8_000


@dataclass(frozen=True)
class Task:
    id: int
    run_id: str
    flow: str
    step: str
    index: int
    attempt: int
    token: uuid.UUID
    key: str
    timeout: int
    # JSON text: {"run": input, "inputs": {...} | null, "item": element | null,
    # "resume": what a waiting step waited for | null}
    payload: str
    # The org of the task's run: the task's key is (id, org), and the worker names both
    # when it records the outcome or renews the lease.
    org: str

    @property
    def label(self) -> str:
        return f"{self.step}[{self.index}]" if self.index else self.step

    def decode(self) -> tuple[Any, dict[str, Any], Any, dict[str, Any] | None]:
        """The run input, the dependencies' outputs, the map element and what a waiting
        step waited for. Decoding happens per task, so one payload too deep for Python
        fails only its own task."""
        data = payloads.loads(self.payload, f"The input of run {self.run_id}")
        return data["run"], data["inputs"] or {}, data["item"], data.get("resume")


@dataclass(frozen=True)
class Outcome:
    task: Task
    output: str | None = None  # JSON text, when the handler succeeded
    error: dict[str, Any] | None = None
    permanent: bool = False
    cost: float = 0.0
    duration: float = 0.0  # seconds the handler ran
    # More than completing: {"children": [...]}, {"resumeAt": iso}, {"startChild": true}
    directive: dict[str, Any] | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None


class HandlerRaised(Exception):
    """Carries whatever a handler raised (BaseException included) out of its thread,
    coroutine or process as an ordinary exception, so asyncio never sees a SystemExit."""

    def __init__(self, original: BaseException, traceback_text: str | None = None) -> None:
        super().__init__(original)
        self.original = original
        self.traceback_text = traceback_text


class HandlerTimeout(Exception):
    pass


def task_from_row(row: dict[str, Any]) -> Task:
    return Task(
        id=row["task_id"],
        run_id=row["run_id"],
        flow=row["flow_slug"],
        step=row["step_slug"],
        index=row["task_index"],
        attempt=row["attempt"],
        token=row["delivery_token"],
        key=row["idempotency_key"],
        timeout=row["timeout_seconds"],
        payload=row["payload"],
        org=row["org_id"],
    )


def error_record(exc: BaseException, *, traceback_text: str | None = None) -> dict[str, Any]:
    """An exception as the JSON error of a failed attempt; never refused by PostgreSQL.
    ``traceback_text`` replaces the traceback (an exception raised in another process)."""
    message = exc.message if isinstance(exc, CharterError) else str(exc)
    trace = traceback_text or "".join(traceback.format_exception(exc))
    error: dict[str, Any] = {
        "type": getattr(exc, "remote_type", None) or type(exc).__name__,
        "message": _storable(message, MAX_MESSAGE),
        "traceback": _storable(trace, MAX_TRACEBACK, tail=True),
    }
    if isinstance(exc, CharterError):
        error["code"] = exc.code
    return error


def plain_error(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": str(kind), "message": _storable(message, MAX_MESSAGE), **extra}


def _storable(text: str, limit: int, *, tail: bool = False) -> str:
    # U+0000 and lone surrogates cannot be stored; an error message must never be refused.
    text = text.replace("\x00", "\\0").encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) <= limit:
        return text
    if tail:
        return "…" + text[-limit:]
    return text[:limit] + f"… ({len(text) - limit} more characters)"
