"""Document operations: create, amend and act on documents, read them and their history."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter import settings, tracing
from charter.db.store import Call, Operation, first_json, json_rows
from charter.errors import ArgumentError, DocumentTooLargeError, PermissionDeniedError, with_code
from charter.ops.arguments import clean_text, text_argument
from charter.ops.run_model import timestamp
from charter.payloads import json_text, shown

log = logging.getLogger("charter.documents")


@dataclass(frozen=True)
class Wait:
    """What an instance waits for at a node: kind ``transition`` (a person moves the
    document through a gate), ``approval``, ``event``, ``timer``, ``delivery`` (a side
    effect) or ``task`` (a Python action), with detail (gates, event key, due time…); a
    failed instance waits for a ``fix`` at the node that failed, its error (``code``,
    ``message``, ``hint``) the detail. ``since``: when the wait began (None for a fix)."""

    kind: str
    node: str
    detail: dict[str, Any] = field(default_factory=dict)
    since: datetime | None = None


@dataclass(frozen=True)
class DocumentWorkflow:
    """A document's (latest) workflow instance: a run of the execution core."""

    run_id: str | None
    status: str | None  # running | completed | failed | cancelled; None before it starts
    current_nodes: list[str]
    waiting_for: list[Wait]
    runnable: bool  # the engine still has something to do now
    version_id: str | None = None
    workflow: str | None = None
    document_version: int | None = None
    context: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    cancel_reason: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    # Nothing more happens without outside input (a person, an event, a resume): nothing
    # runnable, and no timer, delivery (retries included) or task pending.
    settled: bool = False


def _detail(kind: str, detail: dict[str, Any]) -> dict[str, Any]:
    # A failed instance's fix carries its error: with the error's stable code.
    return (with_code(detail) or {}) if kind == "fix" else detail


def document_workflow(data: dict[str, Any] | None) -> DocumentWorkflow | None:
    if data is None:
        return None
    return DocumentWorkflow(
        run_id=data.get("runId"),
        status=data.get("status"),
        current_nodes=list(data.get("currentNodes") or []),
        waiting_for=[
            Wait(
                w["kind"],
                w["node"],
                _detail(w["kind"], w.get("detail") or {}),
                timestamp(w.get("since")),
            )
            for w in data.get("waitingFor") or []
        ],
        runnable=bool(data.get("runnable")),
        version_id=data.get("versionId"),
        workflow=data.get("workflow"),
        document_version=data.get("documentVersion"),
        context=data.get("context") or {},
        error=with_code(data.get("error")),
        cancel_reason=data.get("cancelReason"),
        started_at=timestamp(data.get("startedAt")),
        completed_at=timestamp(data.get("completedAt")),
        settled=bool(data.get("settled")),
    )


@dataclass(frozen=True)
class Document:
    id: str
    entity_type: str
    org_id: str
    version: int
    state: str
    data: dict[str, Any]
    amended_from: str | None
    created_at: datetime
    updated_at: datetime
    contract_version_id: str = ""
    trace_id: str | None = None  # of the mutation that returned it
    # The document that amended this one: it no longer changes (DOCUMENT_AMENDED).
    amended_by: str | None = None
    # Its workflow instance, as documents.get and documents.wait read it (None otherwise).
    workflow: DocumentWorkflow | None = None
    # What people call it: the contract's display.title rendered (charter._document_title),
    # else "<Entity type> <first 8 of the id>".
    title: str = ""


@dataclass(frozen=True)
class AuditEntry:
    version: int
    action: str
    actor: str
    run_as: str  # 'actor', or the reserved actor (system, service:NAME) acting
    via: str  # api | workflow | system
    at: datetime
    reason: str | None
    # {field: {"from", "to"}}; "$state" for a transition; "$amendedFrom" / "$amendedBy"
    # (and "$frozen") on an amendment's rows
    changes: dict[str, Any]
    trace_id: str


def document(data: dict[str, Any]) -> Document:
    return Document(
        id=data["id"],
        entity_type=data["entityType"],
        org_id=data["orgId"],
        version=data["version"],
        state=data["state"],
        data=data["data"],
        amended_from=data["amendedFrom"],
        created_at=datetime.fromisoformat(data["createdAt"]),
        updated_at=datetime.fromisoformat(data["updatedAt"]),
        contract_version_id=data.get("contractVersionId", ""),
        trace_id=data.get("traceId"),
        amended_by=data.get("amendedBy"),
        workflow=document_workflow(data.get("workflow")),
        title=data.get("title") or "",
    )


def audit_entry(data: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        version=data["version"],
        action=data["action"],
        actor=data["actor"],
        run_as=data["runAs"],
        via=data["via"],
        at=datetime.fromisoformat(data["at"]),
        reason=data["reason"],
        changes=data["changes"],
        trace_id=data["traceId"],
    )


def application_actor(actor: Any) -> str:
    """``actor`` as the actor of an application's document call: never ``system`` nor a
    ``service:NAME`` account, which only the engine acts as (in SQL, as the workflow), so
    no client — nor an API key — changes a document past its policies, whatever database
    role it runs on."""
    name = text_argument(actor, "actor")
    if name == "system" or name.startswith("service:"):
        raise PermissionDeniedError(
            f"actor {name!r} may not create, change or move a document from an application: "
            "system and service:NAME are the engine's actors (the workflow acts as them). "
            "Act as a user of the org's directory (client.directory.put_user), e.g. "
            "actor='u-1'; a service: API key may read, run, send events and handle dead "
            "letters, but documents change only through people and the workflow."
        )
    return name


def mutate(
    org_id: str,
    action: str,
    document_id: str | None,
    changes: Any,
    *,
    actor: str,
    entity_type: str | None = None,
    expected_version: int | None = None,
    reason: str | None = None,
    trace_id: str | None = None,
    to: str | None = None,
    via: str = "api",
    node_id: str | None = None,
) -> Operation[Document]:
    _whole(expected_version, "expected_version")
    trace = tracing.trace_id_for_call(
        None if trace_id is None else text_argument(trace_id, "trace_id")
    )
    params = {
        "org_id": org_id,
        "action": text_argument(action, "action"),
        "document_id": None if document_id is None else text_argument(document_id, "document id"),
        "changes": _changes(changes),
        "actor": application_actor(actor),
        "entity_type": None if entity_type is None else text_argument(entity_type, "entity type"),
        "expected_version": expected_version,
        "reason": None if reason is None else _text(reason, "reason", 2000),
        "trace_id": trace,
        "to": None if to is None else text_argument(to, "to"),
        "via": text_argument(via, "via"),
        "node_id": None if node_id is None else text_argument(node_id, "node_id"),
    }
    # A create with a caller's id, an update with expected_version: a resend is refused
    # rather than applied twice. Without them a resend could apply the change twice.
    safe = (action == "create" and document_id is not None) or expected_version is not None
    call = Call(
        "mutate", params, first_json, retry_safe=safe, what=f"{action} of document {document_id}"
    )
    attributes = {"charter.action": action, "charter.actor": actor, "charter.org": org_id}
    with tracing.span("charter.mutate", trace, attributes) as span:
        made = document((yield call))
        if span is not None:
            span.set_attribute("charter.document", made.id)
            span.set_attribute("charter.version", made.version)
    return made


def amend(
    org_id: str,
    document_id: str,
    changes: Any,
    *,
    actor: str,
    reason: str | None = None,
    trace_id: str | None = None,
) -> Operation[Document]:
    params = {
        "org_id": org_id,
        "document_id": text_argument(document_id, "document id"),
        "changes": _changes(changes),
        "actor": application_actor(actor),
        "reason": None if reason is None else _text(reason, "reason", 2000),
        "trace_id": None if trace_id is None else text_argument(trace_id, "trace_id"),
    }
    call = Call(
        "amend_document", params, first_json, retry_safe=False, what=f"amending {document_id}"
    )
    return document((yield call))


def instance_act(
    act: str, org_id: str, document_id: str, *, actor: str, reason: str | None
) -> Operation[Document]:
    """Pause, resume or restart a document's workflow instance (``act``); the document,
    with its workflow, as it is afterwards."""
    params = {
        "org_id": org_id,
        "document_id": text_argument(document_id, "document id"),
        "actor": text_argument(actor, "actor"),
        "reason": None if reason is None else _text(reason, "reason", 2000),
    }
    # Pausing a paused instance, resuming a running one: no-ops, so a resend is safe; a
    # second restart would be refused (the first one's instance is active).
    call = Call(
        f"{act}_instance",
        params,
        first_json,
        retry_safe=act != "restart",
        what=f"{act} of the workflow of document {document_id}",
    )
    return document((yield call))


def get(org_id: str, document_id: str, version: int | None) -> Operation[Document]:
    params = {
        "org_id": org_id,
        "document_id": text_argument(document_id, "document id"),
        "version": _whole(version, "version"),
    }
    return document((yield Call("get_document", params, first_json)))


def history(org_id: str, document_id: str) -> Operation[list[AuditEntry]]:
    params = {"org_id": org_id, "document_id": text_argument(document_id, "document id")}
    rows = yield Call("document_history", params, json_rows)
    return [audit_entry(row) for row in rows]


def listing(
    org_id: str, entity_type: str | None, state: str | None, limit: int, after: str | None
) -> Operation[list[Document]]:
    if _whole(limit, "limit") is None:
        raise ArgumentError("limit must be a whole number from 1 to 10000.")
    params = {
        "org_id": org_id,
        "entity_type": None if entity_type is None else text_argument(entity_type, "entity_type"),
        "state": None if state is None else text_argument(state, "state"),
        "limit": limit,
        "after": None if after is None else text_argument(after, "after"),
    }
    rows = yield Call("list_documents", params, json_rows)
    return [document(row) for row in rows]


def _whole(value: Any, name: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ArgumentError(f"{name} must be a whole number, not {shown(value, 40)}.")
    return value


def _changes(changes: Any) -> str:
    if changes is None:
        changes = {}
    if not isinstance(changes, dict):
        raise ArgumentError(f"Document changes are a dict of fields, not {type(changes).__name__}.")
    text = json_text(changes, "The document changes")
    # Refused here, before it is sent, when the changes alone pass the limit the database
    # applies to the whole data (its check, _check_document_size, has the final word).
    limit = settings.max_document_bytes()
    if len(text) > limit // 4 and len(text.encode("utf-8")) > limit:
        raise DocumentTooLargeError(
            f"The document's data would be at least {len(text.encode('utf-8'))} bytes as JSON, "
            f"more than the {limit} allowed (CHARTER_MAX_DOCUMENT_BYTES, like the "
            "database's charter.max_document_bytes). Store large content (files, images, long "
            "texts) elsewhere and keep a reference in the document."
        )
    return text


def _text(value: Any, name: str, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ArgumentError(f"{name} must be a string of at most {limit} characters.")
    return clean_text(value, name)
