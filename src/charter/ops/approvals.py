"""Approvals bound to a version (seed 002 WF-03): requests, decisions, the inbox, the pinned
snapshot and what changed since the last approval, chains.

Each call is an operation of :mod:`charter.db.store`, run sync or async by
``client.approvals``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.db.store import Call, Operation, first_json, json_rows
from charter.errors import ApprovalChainInvalidError, ArgumentError
from charter.ops.arguments import text_argument
from charter.ops.run_model import timestamp
from charter.payloads import json_text, shown
from charter.vocabulary import ApprovalDecision


@dataclass(frozen=True)
class Decision:
    id: int
    actor: str
    decision: str  # an ApprovalDecision: approved | rejected | abstained
    entity_version: int
    comment: str | None
    decided_at: datetime
    applied_at: datetime | None  # consumed by a gate: never usable again
    applied_by: str | None
    voided_at: datetime | None  # the document changed before a gate used it
    voided_version: int | None


@dataclass(frozen=True)
class ApprovalRequest:
    id: str
    document_id: str
    entity_type: str | None
    run_id: str
    node: str
    status: str  # pending | approved | rejected | cancelled | voided
    entity_version: int  # the version a decision must name
    snapshot_version: int  # the version the approver is shown
    approvers: list[str]
    decision: str  # any | all
    requester: str | None
    since: datetime
    closed_at: datetime | None = None
    reason: str | None = None
    voided_version: int | None = None
    decisions: list[Decision] = field(default_factory=list)
    delegated: dict[str, Any] = field(default_factory=dict)  # approver -> delegate
    escalated_at: datetime | None = None
    # Whom segregation of duties left out of the approvers, and why: "requester",
    # "authored version 2", "decided stage 1".
    excluded: dict[str, str] = field(default_factory=dict)
    # The document's title at the pinned version (charter._document_title).
    title: str = ""
    # The asked user's own decision ({"decision", "comment", "decidedAt"}), in decided_for.
    mine: dict[str, Any] | None = None


@dataclass(frozen=True)
class FieldValue:
    """A field of the document and its value (None when missing)."""

    field: str
    value: Any


@dataclass(frozen=True)
class FieldChange:
    """A row of an approver's field table."""

    field: str
    last_approved: Any  # at the baseline version (None when missing)
    to_approve: Any  # at the pinned version (None when missing)
    changed: bool


@dataclass(frozen=True)
class ApprovalReview:
    """What an approver reads before deciding: the document's title and summary fields (its
    contract's ``display``) at the pinned version, and a field table against the baseline:
    the last approved version (of this document, else of the one it amends), else the
    document's first version."""

    request_id: str
    document_id: str
    entity_type: str
    title: str
    state: str
    version: int  # the pinned version, the one to approve
    baseline_version: int
    # False: nothing was approved yet, the baseline is the document's first version.
    baseline_approved: bool
    # The document the baseline is a version of: this one, or the one it amends (when this
    # amendment was never approved, its baseline is what was approved of that one).
    baseline_document_id: str
    summary: list[FieldValue]
    fields: list[FieldChange]  # summary fields first, then the list's columns, then by name
    data: dict[str, Any]  # the document's data at the pinned version

    @property
    def changed(self) -> list[FieldChange]:
        return [row for row in self.fields if row.changed]


def review_of(data: dict[str, Any]) -> ApprovalReview:
    return ApprovalReview(
        request_id=data["requestId"],
        document_id=data["documentId"],
        entity_type=data["entityType"],
        title=data["title"],
        state=data["state"],
        version=data["version"],
        baseline_version=data["baselineVersion"],
        baseline_approved=data["baselineApproved"],
        baseline_document_id=data["baselineDocumentId"],
        summary=[FieldValue(s["field"], s.get("value")) for s in data["summary"]],
        fields=[
            FieldChange(f["field"], f.get("lastApproved"), f.get("toApprove"), f["changed"])
            for f in data["fields"]
        ],
        data=data["data"],
    )


def request(data: dict[str, Any]) -> ApprovalRequest:
    return ApprovalRequest(
        id=data["id"],
        document_id=data["documentId"],
        entity_type=data.get("entityType"),
        run_id=data["runId"],
        node=data["node"],
        status=data["status"],
        entity_version=data["entityVersion"],
        snapshot_version=data["snapshotVersion"],
        approvers=list(data["approvers"]),
        decision=data["decision"],
        requester=data.get("requester"),
        since=datetime.fromisoformat(data["since"]),
        closed_at=timestamp(data.get("closedAt")),
        reason=data.get("reason"),
        voided_version=data.get("voidedVersion"),
        delegated=data.get("delegated") or {},
        escalated_at=timestamp(data.get("escalatedAt")),
        excluded=data.get("excluded") or {},
        title=data.get("title") or "",
        mine=data.get("mine"),
        decisions=[
            Decision(
                id=d["id"],
                actor=d["actor"],
                decision=d["decision"],
                entity_version=d["entityVersion"],
                comment=d.get("comment"),
                decided_at=datetime.fromisoformat(d["decidedAt"]),
                applied_at=timestamp(d.get("appliedAt")),
                applied_by=d.get("appliedBy"),
                voided_at=timestamp(d.get("voidedAt")),
                voided_version=d.get("voidedVersion"),
            )
            for d in data.get("decisions") or []
        ],
    )


def decide(
    org_id: str,
    request_id: str,
    decision: str,
    *,
    actor: str,
    entity_version: int,
    comment: str | None = None,
) -> Operation[dict[str, Any]]:
    if decision not in set(ApprovalDecision):
        raise ArgumentError(
            f"decision must be one of {', '.join(ApprovalDecision)}, not {shown(decision)}"
        )
    if isinstance(entity_version, bool) or not isinstance(entity_version, int):
        raise ArgumentError(
            f"entity_version must be the version you looked at (a whole number), not "
            f"{shown(entity_version)}: approvals are bound to a version"
        )
    params = {
        "org_id": org_id,
        "request_id": text_argument(request_id, "request_id"),
        "decision": decision,
        "actor": text_argument(actor, "actor"),
        "entity_version": entity_version,
        "comment": comment,
    }
    # A resend is refused as already decided, never recorded twice.
    result: dict[str, Any] = yield Call(
        "decide_approval", params, first_json, retry_safe=True, what=f"deciding {request_id}"
    )
    return result


def inbox(org_id: str, user: str) -> Operation[list[ApprovalRequest]]:
    rows = yield Call(
        "approval_inbox", {"org_id": org_id, "user": text_argument(user, "user")}, json_rows
    )
    return [request(row) for row in rows]


def get(org_id: str, request_id: str) -> Operation[ApprovalRequest]:
    return request((yield from _part(org_id, request_id, "request")))


def snapshot(org_id: str, request_id: str) -> Operation[dict[str, Any]]:
    """The document at the request's pinned version."""
    return (yield from _part(org_id, request_id, "snapshot"))


def diff(org_id: str, request_id: str) -> Operation[dict[str, Any]]:
    """The changes between the last approved version and the pinned one."""
    return (yield from _part(org_id, request_id, "diff"))


def review(org_id: str, request_id: str) -> Operation[ApprovalReview]:
    """The request as its approver reads it: title, summary and the field table."""
    return review_of((yield from _part(org_id, request_id, "review")))


def decided_for(
    org_id: str, user: str, *, limit: int = 20, offset: int = 0
) -> Operation[list[ApprovalRequest]]:
    """A page of the requests ``user`` was asked to decide that they decided or that closed,
    the latest first; ``mine`` on each is their own decision, if any."""
    for name, value, least in (("limit", limit, 1), ("offset", offset, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ArgumentError(f"{name} is a whole number from {least}, not {shown(value)}")
    params = {"org_id": org_id, "user_id": text_argument(user, "user"),
              "limit": min(limit, 100), "offset": offset}  # fmt: skip
    rows = yield Call("approvals_decided_for", params, json_rows)
    return [request(row) for row in rows]


def _part(org_id: str, request_id: str, part: str) -> Operation[dict[str, Any]]:
    params = {"org_id": org_id, "request_id": text_argument(request_id, "request_id"), "part": part}
    data: dict[str, Any] = yield Call("get_approval", params, first_json)
    return data


def history(org_id: str, document_id: str) -> Operation[list[ApprovalRequest]]:
    params = {"org_id": org_id, "document_id": text_argument(document_id, "document id")}
    rows = yield Call("approval_history", params, json_rows)
    return [request(row) for row in rows]


def define_chain(
    org_id: str, chain_id: str, stages: Any, allow_same_approver: Any = False
) -> Operation[dict[str, Any]]:
    """A new version of the org's chain. By default whoever decided a stage is left out of
    the approvers of the chain's later stages; ``allow_same_approver=True`` (the chain's
    ``allowSameApprover``) lets one person decide several."""
    if not isinstance(stages, list) or not stages:
        raise ArgumentError(
            "stages is a list of one or more stages: [{'approvers': [...], 'decision': 'any'}]"
        )
    if not isinstance(allow_same_approver, bool):
        raise ApprovalChainInvalidError(
            f"allow_same_approver is True or False, not {allow_same_approver!r:.40}: True lets "
            "one person decide several stages of the chain"
        )
    params = {
        "org_id": org_id,
        "chain_id": text_argument(chain_id, "chain_id"),
        "stages": json_text(stages, "stages"),
        "allow_same_approver": allow_same_approver,
    }
    result: dict[str, Any] = yield Call("define_approval_chain", params, first_json)
    return result


def delegate(
    org_id: str, user: str, to: str, starts_at: datetime | None, ends_at: datetime
) -> Operation[dict[str, Any]]:
    if not isinstance(ends_at, datetime) or (
        starts_at is not None and not isinstance(starts_at, datetime)
    ):
        raise ArgumentError("starts_at and ends_at are datetimes (with a time zone)")
    params = {
        "org_id": org_id,
        "from_user": text_argument(user, "user"),
        "to_user": text_argument(to, "to"),
        "starts_at": starts_at,
        "ends_at": ends_at,
    }
    result: dict[str, Any] = yield Call("delegate_approvals", params, first_json, retry_safe=False)
    return result
