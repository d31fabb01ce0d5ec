"""The documents face of the client."""

from __future__ import annotations

from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import documents as documents_ops
from charter.ops import events as events_ops
from charter.ops.documents import AuditEntry, Document


class AsyncDocuments:
    """Business documents of the client's org; every change goes through ``mutate()``."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def create(
        self,
        entity_type: str,
        data: dict[str, Any],
        *,
        actor: str,
        id: str | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        op = documents_ops.mutate(
            self._org,
            "create",
            id,
            data,
            actor=actor,
            entity_type=entity_type,
            reason=reason,
            trace_id=trace_id,
        )
        return await self._store.perform(op, connection)

    async def update(
        self,
        document_id: str,
        changes: dict[str, Any],
        *,
        actor: str,
        expected_version: int | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        op = documents_ops.mutate(
            self._org,
            "update",
            document_id,
            changes,
            actor=actor,
            expected_version=expected_version,
            reason=reason,
            trace_id=trace_id,
        )
        return await self._store.perform(op, connection)

    async def transition(
        self,
        document_id: str,
        gate: str,
        *,
        actor: str,
        to: str | None = None,
        expected_version: int | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        """Pass a gate of the contract; ``to`` picks the target when the gate has several."""
        op = documents_ops.mutate(
            self._org,
            gate,
            document_id,
            None,
            actor=actor,
            to=to,
            expected_version=expected_version,
            reason=reason,
            trace_id=trace_id,
        )
        return await self._store.perform(op, connection)

    async def mutate(
        self,
        document_id: str,
        action: str,
        changes: dict[str, Any] | None = None,
        *,
        actor: str,
        to: str | None = None,
        expected_version: int | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        """The general form: ``update``, a gate, or an action type the contract declares."""
        op = documents_ops.mutate(
            self._org,
            action,
            document_id,
            changes,
            actor=actor,
            to=to,
            expected_version=expected_version,
            reason=reason,
            trace_id=trace_id,
        )
        return await self._store.perform(op, connection)

    async def amend(
        self,
        document_id: str,
        changes: dict[str, Any],
        *,
        actor: str,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        op = documents_ops.amend(
            self._org, document_id, changes, actor=actor, reason=reason, trace_id=trace_id
        )
        return await self._store.perform(op, connection)

    async def pause(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        """Pause the document's workflow instance: it runs nothing and fires no timer until
        :meth:`resume` (due ones fire then), and a transition of the document is refused
        with ``WORKFLOW_PAUSED``. The audit trail names ``actor`` and ``reason``."""
        op = documents_ops.instance_act("pause", self._org, document_id, actor=actor, reason=reason)
        return await self._store.perform(op, connection)

    async def resume(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        """Resume a paused instance: what it held (events, deliveries, due timers) runs."""
        op = documents_ops.instance_act(
            "resume", self._org, document_id, actor=actor, reason=reason
        )
        return await self._store.perform(op, connection)

    async def restart(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        """Start a new workflow instance for a document whose instance was cancelled or
        failed, on the org's current effective workflow, at the document's current state
        (``RUN_STATE_INVALID`` while one is running or paused: cancel it first)."""
        op = documents_ops.instance_act(
            "restart", self._org, document_id, actor=actor, reason=reason
        )
        return await self._store.perform(op, connection)

    async def get(
        self,
        document_id: str,
        version: int | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Document:
        return await self._store.perform(
            documents_ops.get(self._org, document_id, version), connection
        )

    async def history(
        self, document_id: str, *, connection: AsyncConnection | None = None
    ) -> list[AuditEntry]:
        return await self._store.perform(documents_ops.history(self._org, document_id), connection)

    async def list(
        self,
        *,
        entity_type: str | None = None,
        state: str | None = None,
        limit: int = 100,
        after: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> list[Document]:
        op = documents_ops.listing(self._org, entity_type, state, limit, after)
        return await self._store.perform(op, connection)

    async def wait(
        self, document_id: str, timeout: float = 30, *, until: str = "settled"
    ) -> Document:
        """The document once its workflow has come as far as ``until`` says: ``"settled"``
        (the default: it waits for a person, an event or a resume, or it ended; timers and
        delivery retries are waited through), ``"idle"`` (nothing runnable right now, a
        pending timer or delivery retry included) or a state of its contract (the document is
        in it). ``.workflow`` says where it is; DocumentWaitTimeoutError after ``timeout``."""
        return await self._store.perform(events_ops.wait(self._org, document_id, timeout, until))
