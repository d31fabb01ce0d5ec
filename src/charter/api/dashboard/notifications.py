"""The signed-in user's in-app notifications; mark one, or all, read."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render


@page
async def notifications_page(request: Request, who: Principal) -> Response:
    if request.method == "POST":
        form = await request.form()
        ids = [int(str(v)) for v in form.getlist("id")] if form.get("action") == "read" else None
        await who.client.notifications.mark_read(who.actor, ids)
        return redirect(request, "notifications")
    notes = await who.client.notifications.list(who.actor)
    return render(request, who, "notifications.html", notifications=notes)
