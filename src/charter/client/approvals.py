# Generated from approvals_async.py by tools/async_to_sync.py; do not edit.
# Edit approvals_async.py and run: python tools/async_to_sync.py
"""The approvals face of the client."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from charter.client.approvals_async import AsyncApprovals as AsyncApprovals
from charter.db.store import Connection, Store
from charter.ops import approvals
from charter.ops.approvals import ApprovalRequest, ApprovalReview


class Approvals:
    """Approvals bound to a document version: the inbox, deciding, what was approved."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

    def inbox(self, user: str, *, connection: Connection | None = None) -> list[ApprovalRequest]:
        """The requests waiting for ``user``'s decision, oldest first."""
        return self._store.perform(approvals.inbox(self._org, user), connection)

    def get(self, request_id: str, *, connection: Connection | None = None) -> ApprovalRequest:
        return self._store.perform(approvals.get(self._org, request_id), connection)

    def decide(
        self,
        request_id: str,
        decision: str,
        *,
        actor: str,
        entity_version: int,
        comment: str | None = None,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """Record ``actor``'s decision (approved | rejected | abstained) on the version the
        request is pinned to (``entity_version`` must be it)."""
        op = approvals.decide(
            self._org,
            request_id,
            decision,
            actor=actor,
            entity_version=entity_version,
            comment=comment,
        )
        return self._store.perform(op, connection)

    def snapshot(self, request_id: str, *, connection: Connection | None = None) -> dict[str, Any]:
        """The document as it was at the pinned version: what the approver must be shown."""
        return self._store.perform(approvals.snapshot(self._org, request_id), connection)

    def diff(self, request_id: str, *, connection: Connection | None = None) -> dict[str, Any]:
        """The field changes between the last approved version and the pinned one."""
        return self._store.perform(approvals.diff(self._org, request_id), connection)

    def review(self, request_id: str, *, connection: Connection | None = None) -> ApprovalReview:
        """What the approver reads: the document's title and summary fields at the pinned
        version, and each field's last approved value beside the value to approve."""
        return self._store.perform(approvals.review(self._org, request_id), connection)

    def decided(
        self, user: str, *, limit: int = 20, offset: int = 0, connection: Connection | None = None
    ) -> list[ApprovalRequest]:
        """A page of the requests ``user`` decided or that closed, the latest first."""
        op = approvals.decided_for(self._org, user, limit=limit, offset=offset)
        return self._store.perform(op, connection)

    def history(
        self, document_id: str, *, connection: Connection | None = None
    ) -> list[ApprovalRequest]:
        return self._store.perform(approvals.history(self._org, document_id), connection)

    def delegate(
        self,
        user: str,
        *,
        to: str,
        ends_at: datetime,
        starts_at: datetime | None = None,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """Requests made for ``user`` between ``starts_at`` (default now) and ``ends_at`` go to
        ``to`` instead, recorded on each request as delegated."""
        op = approvals.delegate(self._org, user, to, starts_at, ends_at)
        return self._store.perform(op, connection)

    def define_chain(
        self,
        chain_id: str,
        stages: list[dict[str, Any]],
        *,
        allow_same_approver: bool = False,
        connection: Connection | None = None,
    ) -> dict[str, Any]:
        """A new version of the org's approval chain (stages run in order). Whoever decided a
        stage is left out of the later stages' approvers unless ``allow_same_approver``."""
        op = approvals.define_chain(self._org, chain_id, stages, allow_same_approver)
        return self._store.perform(op, connection)
