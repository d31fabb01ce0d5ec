"""The approvals inbox: what waits for the signed-in user, each request with its pinned
snapshot and its diff (one query for the whole page), and what closed lately."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render
from charter.db.store import Call, json_rows
from charter.ops.approvals import request as approval_request
from charter.ops.arguments import text_argument


@page
async def inbox_page(request: Request, who: Principal) -> Response:
    params = {"org_id": who.org_id, "user": text_argument(who.actor, "user")}
    rows = await who.client.store.execute(Call("approval_inbox_shown", params, json_rows))
    shown = [
        {"request": approval_request(row["request"]), "snapshot": row["snapshot"],
         "diff": row["diff"]}
        for row in rows
    ]  # fmt: skip
    rows = await who.client.store.execute(
        Call("approvals_closed_for", {"org_id": who.org_id, "user_id": who.actor}, json_rows)
    )
    closed = [approval_request(row) for row in rows]
    return render(request, who, "inbox.html", items=shown, closed=closed)


@page
async def decide(request: Request, who: Principal) -> Response:
    form = await request.form()
    await who.client.approvals.decide(
        request.path_params["request_id"],
        str(form.get("decision")),
        actor=who.actor,
        entity_version=int(str(form.get("version"))),
        comment=str(form.get("comment") or "") or None,
    )
    return redirect(request, "inbox")
