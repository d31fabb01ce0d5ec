"""The approvals face of the client."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import approvals
from charter.ops.approvals import ApprovalRequest, ApprovalReview


class AsyncApprovals:
    """Approvals bound to a document version: the inbox, deciding, what was approved."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def inbox(
        self, user: str, *, connection: AsyncConnection | None = None
    ) -> list[ApprovalRequest]:
        """The requests waiting for ``user``'s decision, oldest first."""
        return await self._store.perform(approvals.inbox(self._org, user), connection)

    async def get(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> ApprovalRequest:
        return await self._store.perform(approvals.get(self._org, request_id), connection)

    async def decide(
        self,
        request_id: str,
        decision: str,
        *,
        actor: str,
        entity_version: int,
        comment: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        """Record ``actor``'s decision (approved | rejected | abstained) on the version the
        request is pinned to (``entity_version`` must be it)."""
        op = approvals.decide(
            self._org, request_id, decision, actor=actor, entity_version=entity_version,
            comment=comment,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def snapshot(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        """The document as it was at the pinned version: what the approver must be shown."""
        return await self._store.perform(approvals.snapshot(self._org, request_id), connection)

    async def diff(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        """The field changes between the last approved version and the pinned one."""
        return await self._store.perform(approvals.diff(self._org, request_id), connection)

    async def review(
        self, request_id: str, *, connection: AsyncConnection | None = None
    ) -> ApprovalReview:
        """What the approver reads: the document's title and summary fields at the pinned
        version, and each field's last approved value beside the value to approve."""
        return await self._store.perform(approvals.review(self._org, request_id), connection)

    async def decided(
        self,
        user: str,
        *,
        limit: int = 20,
        offset: int = 0,
        connection: AsyncConnection | None = None,
    ) -> list[ApprovalRequest]:
        """A page of the requests ``user`` decided or that closed, the latest first."""
        op = approvals.decided_for(self._org, user, limit=limit, offset=offset)
        return await self._store.perform(op, connection)

    async def history(
        self, document_id: str, *, connection: AsyncConnection | None = None
    ) -> list[ApprovalRequest]:
        return await self._store.perform(approvals.history(self._org, document_id), connection)

    async def delegate(
        self,
        user: str,
        *,
        to: str,
        ends_at: datetime,
        starts_at: datetime | None = None,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        """Requests made for ``user`` between ``starts_at`` (default now) and ``ends_at`` go to
        ``to`` instead, recorded on each request as delegated."""
        op = approvals.delegate(self._org, user, to, starts_at, ends_at)
        return await self._store.perform(op, connection)

    async def define_chain(
        self,
        chain_id: str,
        stages: list[dict[str, Any]],
        *,
        allow_same_approver: bool = False,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        """A new version of the org's approval chain (stages run in order). Whoever decided a
        stage is left out of the later stages' approvers unless ``allow_same_approver``."""
        op = approvals.define_chain(self._org, chain_id, stages, allow_same_approver)
        return await self._store.perform(op, connection)
