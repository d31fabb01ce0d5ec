"""``client.documents``, ``client.directory`` and ``client.definitions``, sync and async.

Each method is one operation of :mod:`charter.documents` for the client's org, performed
by the client's store; every one takes ``connection=`` to run inside the caller's
transaction (a document written in a transaction that rolls back never existed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from charter import documents as ops
from charter import instances
from charter.documents import AuditEntry, DirectoryUser, Document, Published
from charter.dsl.contract import EntityContract
from charter.store import AsyncStore, Store

Connection = psycopg.Connection[Any]
AsyncConnection = psycopg.AsyncConnection[Any]


class Documents:
    """Business documents of the client's org; every change goes through ``mutate()``."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def create(
        self,
        entity_type: str,
        data: dict[str, Any],
        *,
        actor: str,
        id: str | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        op = ops.mutate(
            self._org,
            "create",
            id,
            data,
            actor=actor,
            entity_type=entity_type,
            reason=reason,
            trace_id=trace_id,
        )
        return self._store.perform(op, connection)

    def update(
        self,
        document_id: str,
        changes: dict[str, Any],
        *,
        actor: str,
        expected_version: int | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        op = ops.mutate(
            self._org,
            "update",
            document_id,
            changes,
            actor=actor,
            expected_version=expected_version,
            reason=reason,
            trace_id=trace_id,
        )
        return self._store.perform(op, connection)

    def transition(
        self,
        document_id: str,
        gate: str,
        *,
        actor: str,
        to: str | None = None,
        expected_version: int | None = None,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        """Pass a gate of the contract; ``to`` picks the target when the gate has several."""
        op = ops.mutate(
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
        return self._store.perform(op, connection)

    def mutate(
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
        connection: Connection | None = None,
    ) -> Document:
        """The general form: ``update``, a gate, or an action type the contract declares."""
        op = ops.mutate(
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
        return self._store.perform(op, connection)

    def amend(
        self,
        document_id: str,
        changes: dict[str, Any],
        *,
        actor: str,
        reason: str | None = None,
        trace_id: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        op = ops.amend(
            self._org, document_id, changes, actor=actor, reason=reason, trace_id=trace_id
        )
        return self._store.perform(op, connection)

    def pause(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        """Pause the document's workflow instance: it runs nothing and fires no timer until
        :meth:`resume` (due ones fire then), and a transition of the document is refused
        with ``WORKFLOW_PAUSED``. The audit trail names ``actor`` and ``reason``."""
        op = ops.instance_act("pause", self._org, document_id, actor=actor, reason=reason)
        return self._store.perform(op, connection)

    def resume(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        """Resume a paused instance: what it held (events, deliveries, due timers) runs."""
        op = ops.instance_act("resume", self._org, document_id, actor=actor, reason=reason)
        return self._store.perform(op, connection)

    def restart(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: Connection | None = None,
    ) -> Document:
        """Start a new workflow instance for a document whose instance was cancelled or
        failed, on the org's current effective workflow, at the document's current state
        (``RUN_STATE_INVALID`` while one is running or paused: cancel it first)."""
        op = ops.instance_act("restart", self._org, document_id, actor=actor, reason=reason)
        return self._store.perform(op, connection)

    def get(
        self, document_id: str, version: int | None = None, *, connection: Connection | None = None
    ) -> Document:
        return self._store.perform(ops.get(self._org, document_id, version), connection)

    def history(
        self, document_id: str, *, connection: Connection | None = None
    ) -> list[AuditEntry]:
        return self._store.perform(ops.history(self._org, document_id), connection)

    def list(
        self,
        *,
        entity_type: str | None = None,
        state: str | None = None,
        limit: int = 100,
        after: str | None = None,
        connection: Connection | None = None,
    ) -> list[Document]:
        op = ops.listing(self._org, entity_type, state, limit, after)
        return self._store.perform(op, connection)

    def wait(self, document_id: str, timeout: float = 30, *, until: str = "settled") -> Document:
        """The document once its workflow has come as far as ``until`` says: ``"settled"``
        (the default: it waits for a person, an event or a resume, or it ended; timers and
        delivery retries are waited through), ``"idle"`` (nothing runnable right now, a
        pending timer or delivery retry included) or a state of its contract (the document is
        in it). ``.workflow`` says where it is; DocumentWaitTimeoutError after ``timeout``."""
        return self._store.perform(instances.wait(self._org, document_id, timeout, until))


class AsyncDocuments:
    """The asyncio twin of :class:`Documents`."""

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
        op = ops.mutate(
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
        op = ops.mutate(
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
        op = ops.mutate(
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
        op = ops.mutate(
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
        op = ops.amend(
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
        op = ops.instance_act("pause", self._org, document_id, actor=actor, reason=reason)
        return await self._store.perform(op, connection)

    async def resume(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        op = ops.instance_act("resume", self._org, document_id, actor=actor, reason=reason)
        return await self._store.perform(op, connection)

    async def restart(
        self,
        document_id: str,
        *,
        actor: str,
        reason: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Document:
        op = ops.instance_act("restart", self._org, document_id, actor=actor, reason=reason)
        return await self._store.perform(op, connection)

    async def get(
        self,
        document_id: str,
        version: int | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Document:
        return await self._store.perform(ops.get(self._org, document_id, version), connection)

    async def history(
        self, document_id: str, *, connection: AsyncConnection | None = None
    ) -> list[AuditEntry]:
        return await self._store.perform(ops.history(self._org, document_id), connection)

    async def list(
        self,
        *,
        entity_type: str | None = None,
        state: str | None = None,
        limit: int = 100,
        after: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> list[Document]:
        op = ops.listing(self._org, entity_type, state, limit, after)
        return await self._store.perform(op, connection)

    async def wait(
        self, document_id: str, timeout: float = 30, *, until: str = "settled"
    ) -> Document:
        """The document once its workflow has come as far as ``until`` says (as
        :meth:`Documents.wait`)."""
        return await self._store.perform(instances.wait(self._org, document_id, timeout, until))


class Directory:
    """The org's directory: users with roles, manager, email and phone; org data."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = store, org_id

    def put_user(
        self,
        user_id: str,
        *,
        roles: Sequence[str] = (),
        manager: str | None = None,
        email: str | None = None,
        phone: str | None = None,
        connection: Connection | None = None,
    ) -> DirectoryUser:
        op = ops.put_user(self._org, user_id, roles, manager, email, phone)
        return self._store.perform(op, connection)

    def get_user(self, user_id: str, *, connection: Connection | None = None) -> DirectoryUser:
        return self._store.perform(ops.get_user(self._org, user_id), connection)

    def remove_user(self, user_id: str, *, connection: Connection | None = None) -> bool:
        return self._store.perform(ops.remove_user(self._org, user_id), connection)

    def users_with_role(self, role: str, *, connection: Connection | None = None) -> list[str]:
        return self._store.perform(ops.users_with_role(self._org, role), connection)

    def put_org(
        self, data: dict[str, Any], *, connection: Connection | None = None
    ) -> dict[str, Any]:
        return self._store.perform(ops.put_org(self._org, data), connection)

    def get_org(self, *, connection: Connection | None = None) -> dict[str, Any]:
        return self._store.perform(ops.get_org(self._org), connection)


class AsyncDirectory:
    """The asyncio twin of :class:`Directory`."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def put_user(
        self,
        user_id: str,
        *,
        roles: Sequence[str] = (),
        manager: str | None = None,
        email: str | None = None,
        phone: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> DirectoryUser:
        op = ops.put_user(self._org, user_id, roles, manager, email, phone)
        return await self._store.perform(op, connection)

    async def get_user(
        self, user_id: str, *, connection: AsyncConnection | None = None
    ) -> DirectoryUser:
        return await self._store.perform(ops.get_user(self._org, user_id), connection)

    async def remove_user(self, user_id: str, *, connection: AsyncConnection | None = None) -> bool:
        return await self._store.perform(ops.remove_user(self._org, user_id), connection)

    async def users_with_role(
        self, role: str, *, connection: AsyncConnection | None = None
    ) -> list[str]:
        return await self._store.perform(ops.users_with_role(self._org, role), connection)

    async def put_org(
        self, data: dict[str, Any], *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        return await self._store.perform(ops.put_org(self._org, data), connection)

    async def get_org(self, *, connection: AsyncConnection | None = None) -> dict[str, Any]:
        return await self._store.perform(ops.get_org(self._org), connection)


class Definitions:
    """Published definitions: contracts, and the org's drafts and effective workflows.

    Contracts are the platform's. ``publish(contract)`` publishes a new contract version
    only for a client that may (``Client()`` connected as the schema's owner); a client
    acting for an org (``for_org``, as ``charter serve`` uses for each API key) may only
    find a contract already published, else ``PERMISSION_DENIED``. A new contract version
    changes nothing for an org until it publishes a definition on it or calls ``rebase``.
    """

    def __init__(self, store: Store, org_id: str, *, may_publish: bool = True) -> None:
        self._store, self._org, self._may_publish = store, org_id, may_publish

    def publish(
        self,
        contract: EntityContract | dict[str, Any],
        org_definition: Any | None = None,
        *,
        connection: Connection | None = None,
    ) -> Published:
        """Publish (or find published) ``contract``; with ``org_definition``, also the org's
        effective workflow compiled on the envelope version its baseRef names."""
        op = ops.publish(self._org, contract, org_definition, may_publish=self._may_publish)
        return self._store.perform(op, connection)

    def save_draft(self, org_definition: Any, *, connection: Connection | None = None) -> Published:
        return self._store.perform(ops.save_draft(self._org, org_definition), connection)

    def archive(self, version_id: str, *, connection: Connection | None = None) -> Published:
        return self._store.perform(ops.archive(self._org, version_id), connection)

    def current(self, entity_type: str, *, connection: Connection | None = None) -> Published:
        """What documents of ``entity_type`` follow in the org, and which envelope version
        the org is on (``envelope_version``; the newest is ``latest_envelope_version``)."""
        return self._store.perform(ops.current(self._org, entity_type), connection)

    def rebase(self, entity_type: str, *, connection: Connection | None = None) -> Published:
        """Move the org onto the newest contract of ``entity_type``: its org definition is
        recompiled on the new envelope (``ContractError`` with the compiler's code, and no
        change, where the patch no longer fits)."""
        return self._store.perform(ops.rebase(self._org, entity_type), connection)


class AsyncDefinitions:
    """The asyncio twin of :class:`Definitions`."""

    def __init__(self, store: AsyncStore, org_id: str, *, may_publish: bool = True) -> None:
        self._store, self._org, self._may_publish = store, org_id, may_publish

    async def publish(
        self,
        contract: EntityContract | dict[str, Any],
        org_definition: Any | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Published:
        op = ops.publish(self._org, contract, org_definition, may_publish=self._may_publish)
        return await self._store.perform(op, connection)

    async def save_draft(
        self, org_definition: Any, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(ops.save_draft(self._org, org_definition), connection)

    async def archive(
        self, version_id: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(ops.archive(self._org, version_id), connection)

    async def current(
        self, entity_type: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(ops.current(self._org, entity_type), connection)

    async def rebase(
        self, entity_type: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(ops.rebase(self._org, entity_type), connection)
