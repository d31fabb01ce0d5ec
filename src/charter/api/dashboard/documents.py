"""The documents list and a document's page (pause, resume, restart its workflow)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.dashboard.core import page, redirect, render


@page
async def documents_page(request: Request, who: Principal) -> Response:
    docs = await who.client.documents.list(
        entity_type=request.query_params.get("entity_type") or None,
        state=request.query_params.get("state") or None,
        limit=100,
    )
    return render(request, who, "documents.html", documents=docs, query=request.query_params)


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
    history = await who.client.documents.history(doc.id)
    return render(request, who, "document.html", doc=doc, history=history)
