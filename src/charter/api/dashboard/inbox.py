"""The approvals inbox: what waits for the signed-in user, each request as its approver reads
it (title, summary fields, the field table against the last approved version; one query for
the whole page), a request's own page to decide with a comment, and the requests they
decided or that closed, a page at a time."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render, templates
from charter.db.store import Call, json_rows
from charter.ops.approvals import request as approval_request
from charter.ops.approvals import review_of
from charter.ops.arguments import text_argument

DECIDED_PER_PAGE = 20


def field_value(value: Any) -> str:
    """A field's value as an approver reads it: text as it is, "—" for none, numbers and
    the rest as JSON."""
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def field_label(name: str) -> str:
    return name.replace("_", " ")


templates.env.filters["field_value"] = field_value
templates.env.filters["field_label"] = field_label


def _page_number(request: Request) -> int:
    raw = request.query_params.get("page", "1")
    # A hand-typed ?page= that is no page number shows the first page.
    return int(raw) if raw.isdecimal() and 0 < int(raw) <= 100_000 else 1


@page
async def inbox_page(request: Request, who: Principal) -> Response:
    params = {"org_id": who.org_id, "user": text_argument(who.actor, "user")}
    rows = await who.client.store.execute(Call("approval_inbox_shown", params, json_rows))
    shown = [
        {"request": approval_request(row["request"]), "review": review_of(row["review"])}
        for row in rows
    ]
    number = _page_number(request)
    decided = await who.client.approvals.decided(
        who.actor, limit=DECIDED_PER_PAGE + 1, offset=(number - 1) * DECIDED_PER_PAGE
    )
    return render(
        request, who, "inbox.html", items=shown, decided=decided[:DECIDED_PER_PAGE],
        page=number, more=len(decided) > DECIDED_PER_PAGE,
    )  # fmt: skip


@page
async def approval_page(request: Request, who: Principal) -> Response:
    request_id = request.path_params["request_id"]
    found = await who.client.approvals.get(request_id)
    review = await who.client.approvals.review(request_id)
    may_decide = (
        found.status == "pending"
        and who.actor in found.approvers
        and not any(d.actor == who.actor for d in found.decisions)
    )
    return render(request, who, "approval.html", r=found, review=review, may_decide=may_decide)


@page
async def decide(request: Request, who: Principal) -> Response:
    form = await request.form()
    await who.client.approvals.decide(
        request.path_params["request_id"],
        str(form.get("decision")),
        actor=who.actor,
        entity_version=int(str(form.get("version"))),
        comment=str(form.get("comment") or "").strip() or None,
    )
    return redirect(request, "inbox")
