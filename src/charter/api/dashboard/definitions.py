"""The org's definitions: versions, envelopes and per-slot diffs; and the workflow builder's
page, whose script edits the workflow through the JSON API with this session."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, render
from charter.api.definitions_view import overview


@page
async def definitions_page(request: Request, who: Principal) -> Response:
    return render(request, who, "definitions.html", entries=await overview(who))


@page
async def builder_page(request: Request, who: Principal) -> Response:
    """The builder's root element; the script (``static/builder/builder.js``) calls
    ``{data-api-base}/api/...`` with the session cookie and ``X-CSRF-Token: {data-csrf}``.
    The entity type must be published, else the page is the error page."""
    entity_type = request.path_params["entity_type"]
    await who.client.definitions.current(entity_type)  # ENTITY_TYPE_UNKNOWN: the error page
    # The API is served beside the dashboard, under the same prefix.
    api_base = str(request.scope.get("root_path", "")).rstrip("/")
    return render(request, who, "builder.html", entity_type=entity_type, api_base=api_base)
