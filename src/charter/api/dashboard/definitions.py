"""The org's definitions: versions, envelopes and per-slot diffs."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, render
from charter.api.definitions_view import overview


@page
async def definitions_page(request: Request, who: Principal) -> Response:
    return render(request, who, "definitions.html", entries=await overview(who))
