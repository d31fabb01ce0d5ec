"""/api/approvals: the key's actor's inbox and decided requests, a request, what its approver
reads (title, summary, field table), its snapshot and diff, a decision."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, int_param
from charter.api.schemas import Decide
from charter.ops.approvals import ApprovalRequest, ApprovalReview


@api("GET", "/api/approvals/inbox", "What waits for the key's actor to decide", "approvals",
     response=list[ApprovalRequest])  # fmt: skip
async def approval_inbox(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.inbox(who.actor)


@api("GET", "/api/approvals/decided", "A page of the requests the key's actor decided or that "
     "closed, the latest first (limit, offset)", "approvals",
     response=list[ApprovalRequest])  # fmt: skip
async def approvals_decided(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.decided(
        who.actor, limit=int_param(request, "limit", 20, low=1, high=100),
        offset=int_param(request, "offset", 0, low=0),
    )  # fmt: skip


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


@api("GET", "/api/approvals/{request_id}/review", "What the approver reads: the document's "
     "title and summary fields, and each field's last approved value beside the value to "
     "approve", "approvals", response=ApprovalReview)  # fmt: skip
async def approval_review(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.review(request.path_params["request_id"])


@api("GET", "/api/approvals/{request_id}/snapshot", "The document as it was at the pinned "
     "version", "approvals", response=dict[str, Any])  # fmt: skip
async def approval_snapshot(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.snapshot(request.path_params["request_id"])


@api("GET", "/api/approvals/{request_id}/diff", "What changed since the last approved version",
     "approvals", response=dict[str, Any])  # fmt: skip
async def approval_diff(request: Request, who: Principal, _: None) -> Any:
    return await who.client.approvals.diff(request.path_params["request_id"])
