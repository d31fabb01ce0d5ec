"""/api/definitions: publish, draft, archive, show, diff, rebase and roll back org
definitions; and what the workflow builder reads and checks (/api/definitions/compile,
/api/expressions/check, /api/definitions/{entity_type}/builder and /versions)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.definitions_view import overview
from charter.api.http_errors import RequestInvalid
from charter.api.routing import api
from charter.api.schemas import AnyObject, ExpressionCheck, OrgDefinitionBody, Publish, Rollback
from charter.errors import DefinitionNotFoundError


@api("POST", "/api/definitions", "Publish an org definition on a published contract (a new "
     "contract needs a platform key)", "definitions", body=Publish, response=dict[str, Any],
     status=201)  # fmt: skip
async def publish_definition(request: Request, who: Principal, body: Publish) -> Any:
    # Contracts are the platform's: an org's key may only find one published (the client
    # for its org refuses a new one with PERMISSION_DENIED); a platform key's may publish.
    who.require_admin("publish definitions")
    return await who.client.definitions.publish(body.contract, body.org_definition)


@api("POST", "/api/definitions/drafts", "Save an org definition as a draft", "definitions",
     body=AnyObject, response=dict[str, Any], status=201)  # fmt: skip
async def save_draft(request: Request, who: Principal, body: AnyObject) -> Any:
    who.require_admin("save definition drafts")
    return await who.client.definitions.save_draft(body.root)


@api("POST", "/api/definitions/{version_id}/archive", "Archive a definition version",
     "definitions", response=dict[str, Any])  # fmt: skip
async def archive_definition(request: Request, who: Principal, _: None) -> Any:
    who.require_admin("archive definitions")
    return await who.client.definitions.archive(request.path_params["version_id"])


@api("GET", "/api/definitions", "Entity types, the org's versions, and per-slot diffs of the "
     "current effective workflows against their envelopes", "definitions",
     response=list[dict[str, Any]])  # fmt: skip
async def list_definitions(request: Request, who: Principal, _: None) -> Any:
    return await overview(who)


@api("GET", "/api/definitions/{entity_type}/diff", "What the org changed, by slot (the diff "
     "view)", "definitions", response=dict[str, Any])  # fmt: skip
async def definition_diff(request: Request, who: Principal, _: None) -> Any:
    for entry in await overview(who):
        if entry["entity_type"] == request.path_params["entity_type"] and entry["diff"]:
            return entry["diff"]
    raise DefinitionNotFoundError(
        f"Org {who.org_id} has no effective workflow for {request.path_params['entity_type']!r}."
    )


@api("GET", "/api/definitions/{entity_type}/current", "The definition an entity type runs now "
     "and the envelope version the org is on", "definitions", response=dict[str, Any])  # fmt: skip
async def current_definition(request: Request, who: Principal, _: None) -> Any:
    return await who.client.definitions.current(request.path_params["entity_type"])


@api("POST", "/api/definitions/{entity_type}/rebase", "Move the org onto the newest contract, "
     "its definition recompiled on the new envelope", "definitions",
     response=dict[str, Any])  # fmt: skip
async def rebase_definition(request: Request, who: Principal, _: None) -> Any:
    who.require_admin("rebase definitions")
    return await who.client.definitions.rebase(request.path_params["entity_type"])


@api("POST", "/api/definitions/compile", "Compile an org definition without publishing it: "
     "the compiled workflow and its per-slot diff, or every problem with the slot, node or "
     "edge it concerns (a definition that does not compile is answered 200, ok false)",
     "definitions", body=OrgDefinitionBody, response=dict[str, Any])  # fmt: skip
async def compile_definition(request: Request, who: Principal, body: OrgDefinitionBody) -> Any:
    return await who.client.definitions.compile(body.org_definition)


@api("POST", "/api/expressions/check", "Check an expression (a condition, an edge's "
     "condition or a script) against the typed language and the contract's fields",
     "definitions", body=ExpressionCheck, response=dict[str, Any])  # fmt: skip
async def check_expression(request: Request, who: Principal, body: ExpressionCheck) -> Any:
    return await who.client.definitions.check_expression(
        body.entity_type, body.expression, body.kind
    )


@api("GET", "/api/definitions/{entity_type}/builder", "What the workflow builder needs: "
     "contract, envelope, current definition and draft, node types and their configuration "
     "schemas, edge labels, fields", "definitions", response=dict[str, Any])  # fmt: skip
async def definition_builder(request: Request, who: Principal, _: None) -> Any:
    return await who.client.definitions.builder(
        request.path_params["entity_type"], can_edit=who.admin
    )


@api("GET", "/api/definitions/{entity_type}/versions", "The org's versions of an entity "
     "type's workflow, newest first", "definitions", response=list[dict[str, Any]])  # fmt: skip
async def definition_versions(request: Request, who: Principal, _: None) -> Any:
    return await who.client.definitions.versions(request.path_params["entity_type"])


@api("POST", "/api/definitions/{entity_type}/rollback", "Publish an earlier published "
     "version again as the current one (running instances stay on theirs)", "definitions",
     body=Rollback, response=dict[str, Any], status=201)  # fmt: skip
async def rollback_definition(request: Request, who: Principal, body: Rollback) -> Any:
    who.require_admin("roll back definitions")
    return await who.client.definitions.rollback(
        request.path_params["entity_type"], body.version_id, actor=who.actor
    )


@api("POST", "/api/definitions/{entity_type}/publish", "Publish an org definition on the "
     "published contract its baseRef names", "definitions", body=OrgDefinitionBody,
     response=dict[str, Any], status=201)  # fmt: skip
async def publish_org_definition(request: Request, who: Principal, body: OrgDefinitionBody) -> Any:
    who.require_admin("publish definitions")
    entity_type = request.path_params["entity_type"]
    ref = body.org_definition.get("baseRef")
    named = ref.get("entityType") if isinstance(ref, dict) else None
    if named != entity_type:
        raise RequestInvalid(
            f"'orgDefinition.baseRef.entityType' is {named!r}, but this is the {entity_type!r} "
            "workflow; publish it under its own entity type."
        )
    return await who.client.definitions.publish_definition(body.org_definition)
