"""/api/approvals: the key's actor's inbox, a request, its snapshot and diff, a decision."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api
from charter.api.schemas import Decide
from charter.ops.approvals import ApprovalRequest


@api("GET", "/api/approvals/inbox", "What waits for the key's actor to decide", "approvals",
     response=list[ApprovalRequest])  # fmt: skip
async def approval_inbox(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.inbox(who.actor)


@api("GET", "/api/approvals/{request_id}", "An approval request", "approvals",
     response=ApprovalRequest)  # fmt: skip
async def get_approval(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.get(request.path_params["request_id"])


@api("POST", "/api/approvals/{request_id}/decision", "Approve, reject or abstain on the pinned "
     "version", "approvals", body=Decide, response=dict[str, Any])  # fmt: skip
async def decide_approval(request: Request, who: Principal, body: Decide) -> Any:
    return await who.client.approvals.decide(
        request.path_params["request_id"], body.decision.value, actor=who.actor,
        entity_version=body.version, comment=body.comment,
    )  # fmt: skip


@api("GET", "/api/approvals/{request_id}/snapshot", "The document as it was at the pinned "
     "version", "approvals", response=dict[str, Any])  # fmt: skip
async def approval_snapshot(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.snapshot(request.path_params["request_id"])


@api("GET", "/api/approvals/{request_id}/diff", "What changed since the last approved version",
     "approvals", response=dict[str, Any])  # fmt: skip
async def approval_diff(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.diff(request.path_params["request_id"])
