"""Documents' workflow instances as Python sees them, and the calls around them: waiting for
a document's instance to settle, sending events, the org's rule store and the test clock.

Each call is an operation of :mod:`charter.store` (written once, run sync or async), like
:mod:`charter.documents`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from charter.documents import Document, DocumentWorkflow, document_workflow, get
from charter.errors import ArgumentError, DocumentWaitTimeoutError, ProductionClockError
from charter.expr.compile import compile_expression
from charter.operations import text_argument
from charter.payloads import json_text
from charter.store import Call, Listen, Operation, first_json, first_value, json_rows

_POLL_S = 0.1


def workflow_of(org_id: str, document_id: str) -> Operation[DocumentWorkflow | None]:
    params = {"org_id": org_id, "document_id": text_argument(document_id, "document id")}
    return document_workflow((yield Call("document_workflow", params, first_json)))


WAIT_UNTIL = ("settled", "idle")
"""What ``documents.wait(until=)`` takes besides a state of the document's contract."""


def wait(
    org_id: str, document_id: str, timeout: float, until: str = "settled"
) -> Operation[Document]:
    """The document once its workflow has come as far as ``until`` says:

    * ``"settled"`` (the default): nothing more happens without outside input — it waits for
      a person, an event or a resume, or it ended — so timers, deliveries and their retries
      are waited through;
    * ``"idle"``: nothing is runnable right now (it may wait on a timer or a delivery retry);
    * a state of the document's contract: the document is in that state.

    DocumentWaitTimeoutError after ``timeout`` seconds."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ArgumentError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if not isinstance(until, str) or not until:
        raise ArgumentError(
            f"until must be 'settled', 'idle' or a state of the document's contract, not "
            f"{until!r:.60}"
        )
    text_argument(document_id, "document id")
    if until not in WAIT_UNTIL:
        states = yield Call(
            "document_states", {"org_id": org_id, "document_id": document_id}, first_value
        )
        if until not in (states or []):
            raise ArgumentError(
                f"until={until!r:.60}: document {document_id!r}'s contract has no such state; its "
                f"states are {', '.join(states or [])}. Pass one of them, 'settled' (the "
                "default) or 'idle'."
            )
    deadline = time.monotonic() + timeout
    while True:
        seen = yield Listen()
        if until in WAIT_UNTIL:
            state = yield from workflow_of(org_id, document_id)
            if state is not None and (state.settled if until == "settled" else not state.runnable):
                return (yield from get(org_id, document_id, None))
        else:
            document = yield from get(org_id, document_id, None)
            if document.state == until:
                return document
            state = document.workflow
        left = deadline - time.monotonic()
        if left <= 0:
            raise DocumentWaitTimeoutError(_not_yet(document_id, timeout, until, state))
        yield Listen(seen, min(left, _POLL_S))


def _not_yet(document_id: str, timeout: float, until: str, state: DocumentWorkflow | None) -> str:
    at = ", ".join(state.current_nodes) if state and state.current_nodes else "no instance yet"
    kinds = sorted({w.kind for w in state.waiting_for}) if state else []
    waits = f", waiting for {' and '.join(kinds)}" if kinds else ""
    if until not in WAIT_UNTIL:
        return (
            f"Document {document_id!r} did not reach state {until!r} within {timeout:g}s (its "
            f"workflow is at {at}{waits}). The document goes on either way."
        )
    if until == "settled" and state is not None and not state.runnable:
        return (
            f"Document {document_id!r}'s workflow did not settle within {timeout:g}s (at {at}"
            f"{waits}): a timer or a delivery is still to come. Wait longer, or pass "
            "until='idle' to return while it waits on them. The document goes on either way."
        )
    return (
        f"Document {document_id!r}'s workflow still had work after {timeout:g}s (at {at}). "
        "Is a worker running (`charter worker`)? The document goes on either way."
    )


# -- events --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SentEvent:
    event_id: str
    status: str  # delivered (to waiting instances) | kept (for a wait to come) | duplicate
    matched: int


def send_event(
    org_id: str,
    key: str,
    payload: Any = None,
    event_id: str | None = None,
    document_id: str | None = None,
) -> Operation[SentEvent]:
    params = {
        "org_id": org_id,
        "key": text_argument(key, "event key"),
        "payload": None if payload is None else json_text(payload, "event payload"),
        "event_id": None if event_id is None else text_argument(event_id, "event_id"),
        "document_id": None if document_id is None else text_argument(document_id, "document_id"),
    }
    # With the caller's event id a resend is a duplicate, so it is safe to send again.
    call = Call(
        "send_event", params, first_json, retry_safe=event_id is not None, what=f"event {key}"
    )
    data = yield call
    return SentEvent(data["eventId"], data["status"], data["matched"])


# -- rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    rule_id: str
    version: int
    expression: str
    description: str | None
    status: str | None = None  # stored | unchanged (put only)


def _rule(data: dict[str, Any]) -> Rule:
    return Rule(
        data["ruleId"], data["version"], data["expression"], data["description"], data.get("status")
    )


def put_rule(
    org_id: str, rule_id: str, expression: str, description: str | None
) -> Operation[Rule]:
    if not isinstance(expression, str):
        raise ArgumentError(f"a rule's expression is a string, not {type(expression).__name__}")
    # A rule node takes its true or false edge: a rule that cannot be either would strand
    # every document that reaches it.
    compiled = compile_expression(expression, boolean=True)
    params = {
        "org_id": org_id,
        "rule_id": text_argument(rule_id, "rule_id"),
        "expression": expression,
        "ast": Jsonb(compiled["ast"]),
        "description": description,
    }
    return _rule((yield Call("put_rule", params, first_json, what=f"storing rule {rule_id}")))


def get_rule(org_id: str, rule_id: str, version: int | None) -> Operation[Rule]:
    params = {"org_id": org_id, "rule_id": text_argument(rule_id, "rule_id"), "version": version}
    return _rule((yield Call("get_rule", params, first_json)))


# -- the test clock ------------------------------------------------------------------------


def advance_clock(org_id: str, by: timedelta | float, development: bool) -> Operation[datetime]:
    """Moves the org's test clock forward; other orgs' time does not move."""
    if not development:
        raise ProductionClockError(
            "The test clock moves only in development mode; this client talks to a production "
            "database. Set CHARTER_MODE=development for tests and demos."
        )
    seconds = by.total_seconds() if isinstance(by, timedelta) else by
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ArgumentError(f"the test clock moves forward by seconds >= 0, not {by!r}")
    rows = yield Call(
        "advance_test_clock",
        {"org_id": org_id, "by": f"{float(seconds)} seconds"},
        list,
        retry_safe=False,
    )
    return rows[0][1]  # type: ignore[no-any-return]


def reset_clock(org_id: str, development: bool) -> Operation[datetime]:
    if not development:
        raise ProductionClockError(
            "The test clock moves only in development mode. Set CHARTER_MODE=development."
        )
    rows = yield Call("reset_test_clock", {"org_id": org_id}, list)
    return rows[0][1]  # type: ignore[no-any-return]


# -- schedules -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    name: str
    cron: str
    timezone: str
    target: dict[str, Any]  # {"kind": "flow", "flow", "input"} | {"kind": "document", …}
    missed: str  # latest | all | skip
    next_at: datetime
    last_tick_at: datetime | None
    last_result: dict[str, Any] | None


def _schedule(data: dict[str, Any]) -> Schedule:
    return Schedule(
        name=data["name"],
        cron=data["cron"],
        timezone=data["timezone"],
        target=data["target"],
        missed=data["missed"],
        next_at=datetime.fromisoformat(data["nextAt"]),
        last_tick_at=(
            datetime.fromisoformat(data["lastTickAt"]) if data.get("lastTickAt") else None
        ),
        last_result=data.get("lastResult"),
    )


def put_schedule(
    org_id: str,
    name: str,
    cron: str,
    *,
    flow: Any = None,
    input: Any = None,
    entity_type: str | None = None,
    action: str | None = None,
    missed: str = "latest",
    timezone: str = "UTC",
) -> Operation[Schedule]:
    if (flow is None) == (entity_type is None):
        raise ArgumentError(
            "A schedule starts a flow (flow=, input=) or acts on documents (entity_type=, "
            "action='create' or a gate); pass exactly one of flow= and entity_type=."
        )
    if flow is not None:
        slug = getattr(flow, "slug", flow)
        target: dict[str, Any] = {"kind": "flow", "flow": text_argument(slug, "flow")}
    else:
        if action is None:
            raise ArgumentError("entity_type= needs action= ('create' or a gate of the contract)")
        target = {
            "kind": "document",
            "entityType": text_argument(entity_type, "entity_type"),
            "action": text_argument(action, "action"),
        }
    if input is not None:
        target["input"] = json.loads(json_text(input, "schedule input"))
    params = {
        "org_id": org_id,
        "name": text_argument(name, "name"),
        "cron": text_argument(cron, "cron"),
        "target": Jsonb(target),
        "missed": text_argument(missed, "missed"),
        "timezone": text_argument(timezone, "timezone"),
    }
    return _schedule((yield Call("put_schedule", params, first_json, what=f"schedule {name}")))


def list_schedules(org_id: str) -> Operation[list[Schedule]]:
    rows = yield Call("list_schedules", {"org_id": org_id}, json_rows)
    return [_schedule(row) for row in rows]


def delete_schedule(org_id: str, name: str) -> Operation[bool]:
    params = {"org_id": org_id, "name": text_argument(name, "name")}
    return bool((yield Call("delete_schedule", params, first_value)))
