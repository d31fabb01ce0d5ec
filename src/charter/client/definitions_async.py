"""The definitions face of the client."""

from __future__ import annotations

from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.dsl.contract import EntityContract
from charter.ops import definitions as definitions_ops
from charter.ops.definitions import Published


class AsyncDefinitions:
    """Published definitions: contracts, and the org's drafts and effective workflows.

    Contracts are the platform's. ``publish(contract)`` publishes a new contract version
    only for a client that may (``Client()`` connected as the schema's owner); a client
    acting for an org (``for_org``, as ``charter serve`` uses for each API key) may only
    find a contract already published, else ``PERMISSION_DENIED``. A new contract version
    changes nothing for an org until it publishes a definition on it or calls ``rebase``.
    """

    def __init__(self, store: AsyncStore, org_id: str, *, may_publish: bool = True) -> None:
        self._store, self._org, self._may_publish = store, org_id, may_publish

    async def publish(
        self,
        contract: EntityContract | dict[str, Any],
        org_definition: Any | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Published:
        """Publish (or find published) ``contract``; with ``org_definition``, also the org's
        effective workflow compiled on the envelope version its baseRef names."""
        op = definitions_ops.publish(
            self._org, contract, org_definition, may_publish=self._may_publish
        )
        return await self._store.perform(op, connection)

    async def save_draft(
        self, org_definition: Any, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(
            definitions_ops.save_draft(self._org, org_definition), connection
        )

    async def archive(
        self, version_id: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        return await self._store.perform(definitions_ops.archive(self._org, version_id), connection)

    async def current(
        self, entity_type: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        """What documents of ``entity_type`` follow in the org, and which envelope version
        the org is on (``envelope_version``; the newest is ``latest_envelope_version``)."""
        return await self._store.perform(
            definitions_ops.current(self._org, entity_type), connection
        )

    async def rebase(
        self, entity_type: str, *, connection: AsyncConnection | None = None
    ) -> Published:
        """Move the org onto the newest contract of ``entity_type``: its org definition is
        recompiled on the new envelope (``ContractError`` with the compiler's code, and no
        change, where the patch no longer fits)."""
        return await self._store.perform(definitions_ops.rebase(self._org, entity_type), connection)

    async def publish_definition(
        self, org_definition: Any, *, connection: AsyncConnection | None = None
    ) -> Published:
        """Publish ``org_definition`` on the published contract its baseRef names, without
        sending the contract (``ContractError`` with the compiler's code where it does not
        compile; :meth:`compile` names every problem first)."""
        return await self._store.perform(
            definitions_ops.publish_definition(self._org, org_definition), connection
        )

    async def builder(
        self, entity_type: str, *, can_edit: bool = True, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        """What the workflow builder edits ``entity_type``'s workflow with: the contract and
        envelope the org is on, its current definition and draft, the node types and their
        configuration schemas, the edge labels, the contract's fields."""
        return await self._store.perform(
            definitions_ops.builder(self._org, entity_type, can_edit=can_edit), connection
        )

    async def compile(
        self, org_definition: Any, *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        """Compile ``org_definition`` without publishing it: ``{"ok": True, "compiled",
        "diff", "warnings"}`` or ``{"ok": False, "errors": [{"code", "message", "slotId",
        "nodeId", "edgeId", "path", "line", "caret", "rule"}]}``, every problem found."""
        return await self._store.perform(
            definitions_ops.compile_definition(self._org, org_definition), connection
        )

    async def check_expression(
        self,
        entity_type: str,
        expression: str,
        kind: str = "condition",
        *,
        connection: AsyncConnection | None = None,
    ) -> dict[str, Any]:
        """Check ``expression`` as a ``kind`` (condition, edge or script) against the
        fields of ``entity_type``'s contract: ``{"ok": True, "type"}`` or ``{"ok": False,
        "error": {"code", "message", "line", "caret"}}`` (``caret``: 0-based column)."""
        return await self._store.perform(
            definitions_ops.check_expression(self._org, entity_type, expression, kind),
            connection,
        )

    async def versions(
        self, entity_type: str, *, connection: AsyncConnection | None = None
    ) -> list[dict[str, Any]]:
        """The org's versions of its ``entity_type`` workflow, newest first."""
        return await self._store.perform(
            definitions_ops.versions(self._org, entity_type), connection
        )

    async def rollback(
        self,
        entity_type: str,
        version_id: str,
        *,
        actor: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> Published:
        """Publish the earlier published version ``version_id`` again as the org's current
        definition (a new version; ``actor`` is recorded). Running instances stay on
        theirs; new documents follow it."""
        return await self._store.perform(
            definitions_ops.rollback(self._org, entity_type, version_id, actor=actor),
            connection,
        )
