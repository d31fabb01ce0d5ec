"""Dead letters: re-drive or drop them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render


@page
async def dead_letters_page(request: Request, who: Principal) -> Response:
    if request.method == "POST":
        form = await request.form()
        ids = [int(str(v)) for v in form.getlist("id")]
        if form.get("action") == "drop":
            who.require_admin("drop dead letters")
            await who.client.dead_letters.drop(ids, actor=who.actor)
        else:
            await who.client.dead_letters.retry(ids, actor=who.actor)
        return redirect(request, "dead_letters")
    letters = await who.client.dead_letters.list()
    return render(request, who, "dead_letters.html", letters=letters)
