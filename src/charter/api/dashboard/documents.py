"""The documents list (filtered by type and state, searched by title, with the contract's
columns) and a document's page: its lifecycle drawn, what its workflow waits for in words,
its history as people read it; pause, resume, restart its workflow."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render
from charter.api.graph import lifecycle_svg
from charter.db.store import Call, first_json
from charter.ops.arguments import text_argument


def _chosen(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    return text_argument(value, name) if value else None


@page
async def documents_page(request: Request, who: Principal) -> Response:
    params = {
        "org_id": who.org_id,
        "entity_type": _chosen(request, "entity_type"),
        "state": _chosen(request, "state"),
        "query": _chosen(request, "q"),
        "limit": 100,
    }
    shown = await who.client.store.execute(Call("documents_shown", params, first_json))
    return render(request, who, "documents.html", shown=shown, query=request.query_params)


@page
async def document_page(request: Request, who: Principal) -> Response:
    document_id = request.path_params["document_id"]
    if request.method == "POST":
        form = await request.form()
        documents = who.client.documents
        act = {"pause": documents.pause, "resume": documents.resume, "restart": documents.restart}
        chosen = act.get(str(form.get("action")))
        if chosen is None:
            raise ValueError("unknown action")
        who.require_admin(f"{form.get('action')} a document's workflow")
        await chosen(document_id, actor=who.actor, reason=str(form.get("reason") or "") or None)
        return redirect(request, "document", document_id=document_id)
    doc = await who.client.documents.get(document_id)
    shown = await who.client.store.execute(
        Call("document_shown", {"org_id": who.org_id, "document_id": doc.id}, first_json)
    )
    diagram = lifecycle_svg(shown["states"], shown["transitions"], doc.state)
    return render(request, who, "document.html", doc=doc, shown=shown, diagram=diagram)
