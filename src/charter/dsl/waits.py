"""Steps that wait without holding a worker: ``@flow.sleep`` and ``@flow.wait_event``.

The decorated function only names the step: its body never runs, so it takes no
parameters. A sleep's output is ``{"wokeAt", "dueAt"}``; a wait_event's is the event's
payload, or after its timeout ``{"timedOut": True, "eventKey", "timeoutAt"}`` (test it with
:func:`timed_out`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from charter.dsl.handler import HandlerSpec
from charter.dsl.limits import check_template
from charter.errors import FlowDefinitionError
from charter.payloads import shown

MAX_SECONDS = 31_536_000


def timed_out(output: Any) -> bool:
    """Whether a wait_event step's output is its timeout marker rather than an event."""
    return isinstance(output, dict) and output.get("timedOut") is True and "eventKey" in output


def placeholder_spec(fn: Callable[..., Any], *, where: str, step_type: str) -> HandlerSpec:
    code = getattr(fn, "__code__", None)
    if code is not None and (code.co_argcount or code.co_kwonlyargcount or code.co_flags & 0x0C):
        raise FlowDefinitionError(
            f"{where}: a {step_type} step's function only names the step (its body does not "
            "run), so it takes no parameters; the step's output goes to the steps that "
            "depend on it.",
            code="FLOW_STEP_INVALID",
        )
    return HandlerSpec(
        where=where,
        handler=fn,
        is_async=False,
        params=(),
        item_param=None,
        takes_all_inputs=False,
        hints={},
        returns=None,
    )


def sleep_config(where: str, seconds: Any, until: Any) -> dict[str, Any]:
    if (seconds is None) == (until is None):
        raise _invalid(
            f"{where}: give seconds= (how long) or until= (a template of the time, "
            "e.g. '{run.remind_at}'), one of them."
        )
    if seconds is not None:
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int)
            or not 0 <= seconds <= MAX_SECONDS
        ):
            raise _invalid(
                f"{where}: seconds={shown(seconds)} is out of range; use a whole "
                f"number from 0 to {MAX_SECONDS}."
            )
        return {"seconds": seconds}
    return {"until": until}


def wait_config(where: str, key: Any, timeout: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"key": key}
    if timeout is not None:
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int)
            or not 1 <= timeout <= MAX_SECONDS
        ):
            raise _invalid(
                f"{where}: timeout={shown(timeout)} is out of range; use a whole "
                f"number of seconds from 1 to {MAX_SECONDS}, or leave it out to "
                "wait for ever."
            )
        config["timeout"] = timeout
    return config


def checked_config(
    where: str, step_type: str, config: dict[str, Any], names: Collection[str]
) -> dict[str, Any]:
    """The config, its template checked against what the step can see."""
    if step_type == "sleep" and "until" in config:
        check_template(where, "until", config["until"], names)
    if step_type == "wait_event":
        check_template(where, "the event key", config["key"], names)
    return config


def _invalid(message: str) -> FlowDefinitionError:
    return FlowDefinitionError(message, code="FLOW_OPTION_INVALID")
