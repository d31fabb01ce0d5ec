"""/api/documents: create, list, show, change and act on documents."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, int_param
from charter.api.schemas import (
    INT_MAX,
    Amend,
    CreateDocument,
    Mutate,
    Reason,
    Transition,
    Update,
)
from charter.ops.documents import AuditEntry, Document


@api("POST", "/api/documents", "Create a document (as the key's actor)", "documents",
     body=CreateDocument, response=Document, status=201)  # fmt: skip
async def create_document(request: Request, who: Principal, body: CreateDocument) -> Any:
    return await who.client.documents.create(
        body.entity_type, body.data, actor=who.actor, id=body.id, reason=body.reason
    )


@api("GET", "/api/documents", "List the org's documents", "documents", response=list[Document])
async def list_documents(request: Request, who: Principal, _: None) -> Any:
    return await who.client.documents.list(
        entity_type=request.query_params.get("entity_type"),
        state=request.query_params.get("state"),
        limit=int_param(request, "limit", 100),
        after=request.query_params.get("after"),
    )


@api("GET", "/api/documents/{document_id}", "A document, its workflow and what it waits for",
     "documents", response=Document)  # fmt: skip
async def get_document(request: Request, who: Principal, _: None) -> Any:
    version = request.query_params.get("version")
    return await who.client.documents.get(
        request.path_params["document_id"],
        int_param(request, "version", 0, low=1, high=INT_MAX) if version else None,
    )


@api("GET", "/api/documents/{document_id}/history", "A document's audit trail", "documents",
     response=list[AuditEntry])  # fmt: skip
async def document_history(request: Request, who: Principal, _: None) -> Any:
    return await who.client.documents.history(request.path_params["document_id"])


@api("PATCH", "/api/documents/{document_id}", "Update a document's fields", "documents",
     body=Update, response=Document)  # fmt: skip
async def update_document(request: Request, who: Principal, body: Update) -> Any:
    return await who.client.documents.update(
        request.path_params["document_id"], body.changes, actor=who.actor,
        expected_version=body.expected_version, reason=body.reason,
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/transitions", "Pass a gate", "documents",
     body=Transition, response=Document)  # fmt: skip
async def transition_document(request: Request, who: Principal, body: Transition) -> Any:
    return await who.client.documents.transition(
        request.path_params["document_id"], body.gate, actor=who.actor, to=body.to,
        expected_version=body.expected_version, reason=body.reason,
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/mutate", "Any action the contract declares",
     "documents", body=Mutate, response=Document)  # fmt: skip
async def mutate_document(request: Request, who: Principal, body: Mutate) -> Any:
    return await who.client.documents.mutate(
        request.path_params["document_id"], body.action, body.changes, actor=who.actor,
        to=body.to, expected_version=body.expected_version, reason=body.reason,
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/amend", "Amend a document (re-approval follows)",
     "documents", body=Amend, response=Document)  # fmt: skip
async def amend_document(request: Request, who: Principal, body: Amend) -> Any:
    return await who.client.documents.amend(
        request.path_params["document_id"], body.changes, actor=who.actor, reason=body.reason
    )


async def _instance_act(request: Request, who: Principal, act: str, reason: str | None) -> Any:
    who.require_admin(f"{act} a document's workflow")
    documents = who.client.documents
    act_on = {"pause": documents.pause, "resume": documents.resume}.get(act, documents.restart)
    return await act_on(request.path_params["document_id"], actor=who.actor, reason=reason)


@api("POST", "/api/documents/{document_id}/pause",
     "Pause the document's workflow instance (nothing runs; transitions are refused)",
     "documents", body=Reason, body_required=False, response=Document)  # fmt: skip
async def pause_document(request: Request, who: Principal, body: Reason) -> Any:
    return await _instance_act(request, who, "pause", body.reason)


@api("POST", "/api/documents/{document_id}/resume", "Resume its paused workflow instance",
     "documents", body=Reason, body_required=False, response=Document)  # fmt: skip
async def resume_document(request: Request, who: Principal, body: Reason) -> Any:
    return await _instance_act(request, who, "resume", body.reason)


@api("POST", "/api/documents/{document_id}/restart",
     "Start a new workflow instance (after a cancel or failure) at the document's state",
     "documents", body=Reason, body_required=False, response=Document)  # fmt: skip
async def restart_document(request: Request, who: Principal, body: Reason) -> Any:
    return await _instance_act(request, who, "restart", body.reason)
