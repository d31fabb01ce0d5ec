"""The registry face of the client: workflows, versions and invocations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import registry as registry_ops
from charter.ops.registry import (
    Invocation,
    InvocationResult,
    Lineage,
    OnExisting,
    Operation_,
    VersionResult,
    WorkflowResult,
)


class AsyncRegistry:
    """The registry of a client (``client.registry``). Every method takes ``connection=`` to
    run inside the caller's transaction."""

    def __init__(self, store: AsyncStore) -> None:
        self._store = store

    async def ensure_workflow(
        self,
        wf_id: str,
        description: str,
        *,
        owner_id: str | None = None,
        on_existing: OnExisting = "update",
        connection: AsyncConnection | None = None,
    ) -> WorkflowResult:
        op = registry_ops.ensure_workflow(wf_id, description, owner_id, on_existing)
        return await self._store.perform(op, connection)

    async def create_workflow_version(
        self,
        workflow_id: str,
        dsl: Any,
        commit_message: str,
        operation: Operation_,
        *,
        version_id: str | None = None,
        generation_id: str | None = None,
        parent_version_ids: Sequence[str] = (),
        owner_id: str | None = None,
        auto_create_parent: bool = True,
        on_existing: OnExisting = "update",
        connection: AsyncConnection | None = None,
    ) -> VersionResult:
        op = registry_ops.create_workflow_version(
            workflow_id, dsl, commit_message, operation, version_id=version_id,
            generation_id=generation_id, parent_version_ids=parent_version_ids,
            owner_id=owner_id, auto_create_parent=auto_create_parent, on_existing=on_existing,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def create_invocation(
        self,
        invocation_id: str,
        version_id: str,
        *,
        workflow_id: str | None = None,
        run_id: str | None = None,
        generation_id: str | None = None,
        owner_id: str | None = None,
        on_existing: Literal["update", "error"] = "update",
        connection: AsyncConnection | None = None,
    ) -> InvocationResult:
        op = registry_ops.create_invocation(
            invocation_id, version_id, workflow_id=workflow_id, run_id=run_id,
            generation_id=generation_id, owner_id=owner_id, on_existing=on_existing,
        )  # fmt: skip
        return await self._store.perform(op, connection)

    async def update_invocation(
        self,
        invocation_id: str,
        *,
        status: str | None = None,
        end_time: datetime | None = None,
        usd_cost: float | None = None,
        connection: AsyncConnection | None = None,
    ) -> Invocation:
        op = registry_ops.update_invocation(
            invocation_id, status=status, end_time=end_time, usd_cost=usd_cost
        )
        return await self._store.perform(op, connection)

    async def lineage(
        self, version_id: str, *, connection: AsyncConnection | None = None
    ) -> Lineage:
        return await self._store.perform(registry_ops.lineage(version_id), connection)
