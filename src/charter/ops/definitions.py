"""Definition operations: publish contracts and org workflows, drafts, archive, rebase,
rollback, and what the workflow builder reads and checks."""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from charter.compiler import node_schemas
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective, field_schema
from charter.compiler.envelope import generate_envelope
from charter.compiler.problems import definition_problems, problem
from charter.db.store import Call, Operation, first_json, json_rows
from charter.dsl.contract import EntityContract
from charter.dsl.slots import USER_NODE_TYPES, OrgWorkflowDefinition
from charter.errors import (
    ArgumentError,
    CharterError,
    DefinitionNotFoundError,
    DefinitionRollbackInvalidError,
    EntityTypeUnknownError,
    ExpressionError,
)
from charter.expr.compile import ROOTS, expression_type
from charter.ops.arguments import text_argument

log = logging.getLogger("charter.documents")


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
    definition = OrgWorkflowDefinition.from_json(org_definition).to_json()
    compiled = compile_effective(generate_envelope(entity), definition)
    return (yield from _publish_compiled(org_id, entity.entity_type, definition, compiled))


def _publish_compiled(
    org_id: str,
    entity_type: str,
    definition: dict[str, Any],
    compiled: dict[str, Any],
    *,
    rollback_of: str | None = None,
    actor: str | None = None,
) -> Operation[Published]:
    """Stores a compiled org definition as the org's current one (``rollback_of``: as the
    earlier version it publishes again, by ``actor``)."""
    warnings = webhook_host_warnings(definition)
    params = {
        "org_id": org_id,
        "entity_type": entity_type,
        "definition": Jsonb(definition),
        "compiled": Jsonb(compiled),
    }
    if rollback_of is None:
        call = Call(
            "publish_org_definition",
            {**params, "base_ref": Jsonb(definition["baseRef"])},
            first_json,
            what=f"publishing the org definition of {entity_type}",
        )
    else:
        call = Call(
            "rollback_definition",
            {**params, "version_id": rollback_of, "actor": actor},
            first_json,
            retry_safe=False,  # sent again after it took effect, it would publish twice
            what=f"rolling the {entity_type} definition of org {org_id} back to {rollback_of}",
        )
    result = yield call
    for warning in warnings:
        log.warning("%s (org %s, %s)", warning, org_id, entity_type)
    if rollback_of is not None:
        log.info(
            "org %s: %s rolled back to %s by %s (now %s)",
            org_id, entity_type, rollback_of, actor, result.get("versionId"),
        )  # fmt: skip
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


# -- the workflow builder ----------------------------------------------------------------

# Edge labels the engine acts on: a condition's or rule's result, an approval's outcome, a
# wait_event's timeout, a webhook's or notification's failed delivery.
EDGE_LABELS = ("true", "false", "approved", "rejected", "timeout", "failed")
OPERATORS = ("==", "!=", ">", ">=", "<", "<=", "in", "contains", "&&", "||", "!")
# What each kind of expression the builder edits must evaluate to (None: anything).
EXPRESSION_KINDS: dict[str, bool] = {"condition": True, "edge": True, "script": False}


def _source(
    org_id: str, entity_type: Any, envelope_version: int | None = None
) -> Operation[dict[str, Any]]:
    params = {
        "org_id": org_id,
        "entity_type": text_argument(entity_type, "entity type"),
        "envelope_version": envelope_version,
    }
    found: dict[str, Any] = yield Call("definition_builder", params, first_json)
    return found


def builder(org_id: str, entity_type: str, *, can_edit: bool) -> Operation[dict[str, Any]]:
    """Everything the workflow builder needs for ``entity_type`` in one answer: the contract
    and envelope the org is on, its current definition and draft, the node types with the
    JSON Schema of each one's configuration (the compiler's own declaration), the edge
    labels the engine acts on, the contract's fields and the expression language's parts."""
    found = yield from _source(org_id, entity_type)
    contract = found.get("contract") or {}
    return {
        **found,
        "nodeSchemas": node_schemas.json_schema(),
        "nodeTypes": list(USER_NODE_TYPES),
        "edgeLabels": list(EDGE_LABELS),
        "fields": dict(contract.get("fields") or {}),
        "functions": [],  # the language has no calls (seed 002 § Typed DSL)
        "operators": list(OPERATORS),
        "roots": list(ROOTS),
        "canEdit": can_edit,
    }


def _base_ref(org_definition: Any) -> tuple[str, int] | None:
    """The entity type and envelope version an org definition names, if it names them."""
    ref = org_definition.get("baseRef") if isinstance(org_definition, dict) else None
    if not isinstance(ref, dict):
        return None
    entity_type, version = ref.get("entityType"), ref.get("envelopeVersion")
    if not isinstance(entity_type, str) or type(version) is not int:
        return None
    return entity_type, version


def compile_definition(org_id: str, org_definition: Any) -> Operation[dict[str, Any]]:
    """``{"ok": True, "compiled", "diff", "warnings"}`` for an org definition that compiles
    on the envelope its baseRef names (``diff``: per slot, against the bare envelope), else
    ``{"ok": False, "errors": [...]}`` with every problem the compiler finds, each with the
    slot, node, edge and expression position it concerns (:mod:`charter.compiler.problems`).
    A definition that does not compile is an answer, not an error."""
    ref = _base_ref(org_definition)
    if ref is None:
        return {"ok": False, "errors": definition_problems({}, org_definition)}
    try:
        found = yield from _source(org_id, ref[0], ref[1])
    except (EntityTypeUnknownError, ArgumentError) as exc:
        return {"ok": False, "errors": problem(exc)}
    envelope = found["envelope"]
    try:
        compiled = compile_effective(envelope, org_definition)
    except CharterError:
        return {"ok": False, "errors": definition_problems(envelope, org_definition)}
    return {
        "ok": True,
        "compiled": compiled,
        "diff": diff_effective(compiled, compile_effective(envelope)),
        "warnings": list(webhook_host_warnings(org_definition)),
    }


def check_expression(
    org_id: str, entity_type: str, expression: str, kind: str
) -> Operation[dict[str, Any]]:
    """``{"ok": True, "type"}``, or ``{"ok": False, "error": {"code", "message", "line",
    "caret"}}`` (``caret``: the 0-based column): ``expression`` checked as the compiler
    checks a ``kind`` (condition, edge or script) against the fields of the contract the
    org is on."""
    if kind not in EXPRESSION_KINDS:
        raise ArgumentError(
            f"kind {kind!r} is not one of {', '.join(EXPRESSION_KINDS)} (a condition or an "
            "edge's condition must be true or false; a script may give any value)."
        )
    found = yield from _source(org_id, entity_type)
    # The envelope's copy of the contract, as written (the stored one has its policy rules
    # compiled beside them).
    schema = field_schema(EntityContract.from_json(found["envelope"]["contract"]))
    try:
        kind_of = expression_type(expression, schema, boolean=EXPRESSION_KINDS[kind])
    except ExpressionError as exc:
        return {
            "ok": False,
            "error": {
                "code": exc.code,
                "message": exc.message,
                "line": exc.line,
                "caret": exc.column - 1,
            },
        }
    return {"ok": True, "type": kind_of}


def publish_definition(org_id: str, org_definition: Any) -> Operation[Published]:
    """Publishes ``org_definition`` on the published contract its baseRef names (no
    contract to send: the builder edits definitions only)."""
    definition = OrgWorkflowDefinition.from_json(org_definition).to_json()
    entity_type = definition["baseRef"]["entityType"]
    found = yield from _source(org_id, entity_type, definition["baseRef"]["envelopeVersion"])
    compiled = compile_effective(found["envelope"], definition)
    return (yield from _publish_compiled(org_id, entity_type, definition, compiled))


def versions(org_id: str, entity_type: str) -> Operation[list[dict[str, Any]]]:
    """The org's versions of its ``entity_type`` workflow, newest first: ``{"versionId",
    "version", "status", "kind", "envelopeVersion", "createdAt", "createdBy", "hash",
    "current", "message", "rollbackOf"}``."""
    params = {"org_id": org_id, "entity_type": text_argument(entity_type, "entity type")}
    rows = yield Call("definition_versions", params, json_rows)
    return [{k: v for k, v in row.items() if k not in ("definition", "entityType")} for row in rows]


def rollback(
    org_id: str, entity_type: str, version_id: str, *, actor: str | None = None
) -> Operation[Published]:
    """Publishes the earlier published version ``version_id`` (an org definition, or the
    effective workflow compiled from it) again as the org's current one: a new version,
    compiled on the envelope its baseRef names, recording ``actor`` and ``version_id``.
    Running instances stay on their version; new documents follow it."""
    version_id = text_argument(version_id, "version_id")
    params = {"org_id": org_id, "entity_type": text_argument(entity_type, "entity type")}
    rows = yield Call("definition_versions", params, json_rows)
    old = next((row for row in rows if row["versionId"] == version_id), None)
    if old is None or old.get("definition") is None:
        raise DefinitionNotFoundError(
            f"Org {org_id} has no {entity_type} definition version {version_id!r}; list them "
            "with client.definitions.versions(entity_type)."
        )
    if old["status"] != "published":
        raise DefinitionRollbackInvalidError(
            f"Version {version_id} of {entity_type} is {old['status']}: only a published "
            "version can be published again."
        )
    definition = old["definition"]
    found = yield from _source(org_id, entity_type, definition["baseRef"]["envelopeVersion"])
    compiled = compile_effective(found["envelope"], definition)
    return (
        yield from _publish_compiled(
            org_id, entity_type, definition, compiled, rollback_of=version_id, actor=actor
        )
    )
