"""Definition operations: publish contracts and org workflows, drafts, archive, rebase."""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.db.store import Call, Operation, first_json
from charter.dsl.contract import EntityContract
from charter.dsl.slots import OrgWorkflowDefinition
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
