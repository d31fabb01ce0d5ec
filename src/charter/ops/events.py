"""Event operations: send an event to a document's workflow, and wait for its state."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from charter.db.store import Call, Listen, Operation, first_json, first_value
from charter.errors import ArgumentError, DocumentWaitTimeoutError
from charter.ops.arguments import text_argument
from charter.ops.documents import Document, DocumentWorkflow, document_workflow, get
from charter.payloads import json_text

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
