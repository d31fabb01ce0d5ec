"""The directory face of the client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import directory as directory_ops
from charter.ops.directory import DirectoryUser


class AsyncDirectory:
    """The org's directory: users with roles, manager, email and phone; org data."""

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
        op = directory_ops.put_user(self._org, user_id, roles, manager, email, phone)
        return await self._store.perform(op, connection)

    async def get_user(
        self, user_id: str, *, connection: AsyncConnection | None = None
    ) -> DirectoryUser:
        return await self._store.perform(directory_ops.get_user(self._org, user_id), connection)

    async def remove_user(self, user_id: str, *, connection: AsyncConnection | None = None) -> bool:
        return await self._store.perform(directory_ops.remove_user(self._org, user_id), connection)

    async def users_with_role(
        self, role: str, *, connection: AsyncConnection | None = None
    ) -> list[str]:
        return await self._store.perform(directory_ops.users_with_role(self._org, role), connection)

    async def put_org(
        self, data: dict[str, Any], *, connection: AsyncConnection | None = None
    ) -> dict[str, Any]:
        return await self._store.perform(directory_ops.put_org(self._org, data), connection)

    async def get_org(self, *, connection: AsyncConnection | None = None) -> dict[str, Any]:
        return await self._store.perform(directory_ops.get_org(self._org), connection)
