"""/api/definitions: publish, draft, archive, show, diff and rebase org definitions."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.definitions_view import overview
from charter.api.routing import api
from charter.api.schemas import AnyObject, Publish
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
