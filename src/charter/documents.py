"""Business documents: ``mutate()``, versions, audit, the directory and published definitions.

Every change of a document goes through ``charter.mutate`` in SQL, one transaction that
checks the actor against the contract's policy, the edit window, the expected version, the
fields and the lifecycle, then writes the new version, an audit row and the events the
engine consumes. The classes here describe those calls once, as operations of
:mod:`charter.store`; ``client.documents``, ``client.directory`` and ``client.definitions``
run them (sync or async) for the client's org.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from charter import settings, tracing
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.dsl.contract import EntityContract
from charter.dsl.slots import OrgWorkflowDefinition
from charter.engine.runs import timestamp
from charter.errors import ArgumentError, DocumentTooLargeError, PermissionDeniedError, with_code
from charter.operations import clean_text, text_argument
from charter.payloads import json_text, shown
from charter.store import Call, Operation, first_json, first_value, json_rows

log = logging.getLogger("charter.documents")


@dataclass(frozen=True)
class Wait:
    """What an instance waits for at a node: kind ``transition`` (a person moves the
    document through a gate), ``approval``, ``event``, ``timer``, ``delivery`` (a side
    effect) or ``task`` (a Python action), with detail (gates, event key, due time…); a
    failed instance waits for a ``fix`` at the node that failed, its error (``code``,
    ``message``, ``hint``) the detail."""

    kind: str
    node: str
    detail: dict[str, Any] = field(default_factory=dict)


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
            Wait(w["kind"], w["node"], _detail(w["kind"], w.get("detail") or {}))
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


@dataclass(frozen=True)
class DirectoryUser:
    id: str
    roles: list[str]
    manager: str | None
    email: str | None
    phone: str | None


@dataclass(frozen=True)
class Published:
    """A stored definition: ``status`` published | verified | draft | archived."""

    version_id: str
    hash: str | None
    status: str
    kind: str  # envelope | org_patch | effective
    version: int
    compiled: dict[str, Any] | None = None
    # The envelope (contract) version it is on; for ``definitions.current`` and ``rebase``
    # the one the org is on, and ``latest_envelope_version`` the newest published.
    envelope_version: int | None = None
    latest_envelope_version: int | None = None
    # What publishing noticed but did not refuse, e.g. a webhook whose host is made from a
    # document's data (``WEBHOOK_HOST_FROM_DATA``): "CODE: message" each.
    warnings: tuple[str, ...] = ()


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


def published(data: dict[str, Any]) -> Published:
    return Published(
        version_id=data["versionId"],
        hash=data.get("hash"),
        status=data["status"],
        kind=data["kind"],
        version=data["version"],
        compiled=data.get("compiled"),
        envelope_version=data.get("envelopeVersion"),
        latest_envelope_version=data.get("latestEnvelopeVersion"),
    )


# -- documents ---------------------------------------------------------------------------


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


# -- directory ---------------------------------------------------------------------------


def put_user(
    org_id: str,
    user_id: str,
    roles: Sequence[str],
    manager: str | None,
    email: str | None,
    phone: str | None,
) -> Operation[DirectoryUser]:
    if isinstance(roles, str | bytes) or not isinstance(roles, Sequence):
        raise ArgumentError(f"roles must be a list of role names, not {shown(roles, 80)}.")
    if not all(isinstance(r, str) for r in roles):
        raise ArgumentError(f"roles must be a list of role names, not {shown(roles, 80)}.")
    params = {
        "org_id": org_id,
        "user_id": text_argument(user_id, "user id"),
        "roles": [text_argument(r, "role") for r in roles],
        "manager": None if manager is None else text_argument(manager, "manager"),
        "email": None if email is None else clean_text(email, "email"),
        "phone": None if phone is None else clean_text(phone, "phone"),
    }
    return _user((yield Call("put_user", params, first_json)))


def get_user(org_id: str, user_id: str) -> Operation[DirectoryUser]:
    params = {"org_id": org_id, "user_id": text_argument(user_id, "user id")}
    return _user((yield Call("get_user", params, first_json)))


def remove_user(org_id: str, user_id: str) -> Operation[bool]:
    params = {"org_id": org_id, "user_id": text_argument(user_id, "user id")}
    return bool((yield Call("remove_user", params, first_value)))


def users_with_role(org_id: str, role: str) -> Operation[list[str]]:
    params = {"org_id": org_id, "role": text_argument(role, "role")}
    return list((yield Call("users_with_role", params, first_value)))


def put_org(org_id: str, data: Any) -> Operation[dict[str, Any]]:
    if not isinstance(data, dict):
        raise ArgumentError(f"Org data is a dict, not {type(data).__name__}.")
    params = {"org_id": org_id, "data": json_text(data, "The org data")}
    return dict((yield Call("put_org", params, first_json)))


def get_org(org_id: str) -> Operation[dict[str, Any]]:
    return dict((yield Call("get_org", {"org_id": org_id}, first_json)))


def _user(data: dict[str, Any]) -> DirectoryUser:
    return DirectoryUser(
        id=data["id"],
        roles=list(data["roles"]),
        manager=data.get("manager"),
        email=data.get("email"),
        phone=data.get("phone"),
    )


# -- definitions -------------------------------------------------------------------------


def publish_contract(
    contract: EntityContract | dict[str, Any], *, may_publish: bool = True
) -> Operation[dict[str, Any]]:
    """The contract with its generated envelope and compiled artifact; the same as a
    published version again is ``verified``. Returns the stored version as SQL reports it.

    Contracts are the platform's: with ``may_publish=False`` (a client acting for an org)
    a contract that is not published yet is ``PERMISSION_DENIED`` whatever the database
    role; with ``True``, SQL still requires the schema's owner."""
    entity = contract
    if not isinstance(entity, EntityContract):
        entity = EntityContract.from_json(contract)
    envelope = generate_envelope(entity)
    stored: dict[str, Any] = yield Call(
        "publish_contract",
        {
            "contract": Jsonb(entity.stored_json()),
            "envelope": Jsonb(envelope),
            "compiled": Jsonb(compile_effective(envelope)),
            "may_publish": bool(may_publish),
        },
        first_json,
        what=f"publishing the contract of {entity.entity_type}",
    )
    return stored


def publish(
    org_id: str,
    contract: EntityContract | dict[str, Any],
    org_definition: Any | None,
    *,
    may_publish: bool = True,
) -> Operation[Published]:
    """The contract with its envelope; with an org definition, also the org's effective
    workflow, compiled against the envelope its baseRef names (the org is on that envelope
    version from then on)."""
    entity = contract
    if not isinstance(entity, EntityContract):
        entity = EntityContract.from_json(contract)
    stored = yield from publish_contract(entity, may_publish=may_publish)
    if org_definition is None:
        return published(stored)
    definition = OrgWorkflowDefinition.from_json(org_definition)
    compiled = compile_effective(generate_envelope(entity), definition.to_json())
    warnings = webhook_host_warnings(definition.to_json())
    result = yield Call(
        "publish_org_definition",
        {
            "org_id": org_id,
            "entity_type": entity.entity_type,
            "definition": Jsonb(definition.to_json()),
            "base_ref": Jsonb(definition.to_json()["baseRef"]),
            "compiled": Jsonb(compiled),
        },
        first_json,
        what=f"publishing the org definition of {entity.entity_type}",
    )
    for warning in warnings:
        log.warning("%s (org %s, %s)", warning, org_id, entity.entity_type)
    return dataclasses.replace(published(result), warnings=warnings)


_URL_HOST = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#]*)")


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if isinstance(value.get("type"), str) and isinstance(value.get("config"), dict):
            yield value
        for item in value.values():
            yield from _nodes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _nodes(item)


def webhook_host_warnings(definition: dict[str, Any]) -> tuple[str, ...]:
    """A webhook_out whose URL's host comes from a template (``https://{entity.site}/x``)
    lets whoever writes the document choose where the worker connects: a warning, not a
    refusal (the destination policy still applies when it is sent)."""
    found = []
    for node in _nodes(definition):
        url = node["config"].get("url")
        if node["type"] != "webhook_out" or not isinstance(url, str):
            continue
        host = _URL_HOST.match(url)
        if host is not None and "{" in host.group(1):
            found.append(
                f"WEBHOOK_HOST_FROM_DATA: node {node.get('id')} sends to {url!r}, whose host "
                "comes from a template: whoever writes that data chooses where the worker "
                "connects. Fix the host in the URL and put the data in its path or body; the "
                "webhook destination policy (CHARTER_WEBHOOK_ALLOW) still refuses private "
                "and loopback addresses"
            )
    return tuple(found)


def rebase(org_id: str, entity_type: str) -> Operation[Published]:
    """Moves the org onto the newest contract of ``entity_type``: its current org
    definition recompiled on the new envelope becomes its effective workflow (a patch that
    no longer fits raises the compiler's ``ContractError`` and changes nothing); an org on
    the bare envelope just moves. Running instances and existing documents stay on theirs."""
    params = {"org_id": org_id, "entity_type": text_argument(entity_type, "entity type")}
    source = yield Call("rebase_source", params, first_json)
    target = source["envelopeVersion"]
    definition: dict[str, Any] | None = None
    compiled: dict[str, Any] | None = None
    if source.get("definition") is not None:
        data = copy.deepcopy(source["definition"])
        data["baseRef"]["envelopeVersion"] = target
        definition = OrgWorkflowDefinition.from_json(data).to_json()
        compiled = compile_effective(source["envelope"], definition)
    result = yield Call(
        "rebase_definition",
        {
            **params,
            "from_version_id": source.get("currentVersionId"),
            "envelope_version": target,
            "definition": None if definition is None else Jsonb(definition),
            "compiled": None if compiled is None else Jsonb(compiled),
        },
        first_json,
        retry_safe=False,  # sent again after it took effect, it would find the org moved on
        what=f"rebasing the {entity_type} definition of org {org_id}",
    )
    return published(result)


def save_draft(org_id: str, org_definition: Any) -> Operation[Published]:
    definition = OrgWorkflowDefinition.from_json(org_definition)
    data = definition.to_json()
    params = {
        "org_id": org_id,
        "entity_type": data["baseRef"]["entityType"],
        "definition": Jsonb(data),
        "base_ref": Jsonb(data["baseRef"]),
    }
    return published((yield Call("save_org_draft", params, first_json)))


def archive(org_id: str, version_id: str) -> Operation[Published]:
    params = {"org_id": org_id, "version_id": text_argument(version_id, "version_id")}
    return published((yield Call("archive_definition", params, first_json)))


def current(org_id: str, entity_type: str) -> Operation[Published]:
    params = {"org_id": org_id, "entity_type": text_argument(entity_type, "entity type")}
    return published((yield Call("current_definition", params, first_json)))


__all__ = ["AuditEntry", "DirectoryUser", "Document", "Published"]
