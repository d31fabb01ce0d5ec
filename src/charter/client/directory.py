# Generated from directory_async.py by tools/async_to_sync.py; do not edit.
# Edit directory_async.py and run: python tools/async_to_sync.py
"""The directory face of the client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charter.client.directory_async import AsyncDirectory as AsyncDirectory
from charter.db.store import Connection, Store
from charter.ops import directory as directory_ops
from charter.ops.directory import DirectoryUser


class Directory:
    """The org's directory: users with roles, manager, email and phone; org data."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

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
        op = directory_ops.put_user(self._org, user_id, roles, manager, email, phone)
        return self._store.perform(op, connection)

    def get_user(self, user_id: str, *, connection: Connection | None = None) -> DirectoryUser:
        return self._store.perform(directory_ops.get_user(self._org, user_id), connection)

    def remove_user(self, user_id: str, *, connection: Connection | None = None) -> bool:
        return self._store.perform(directory_ops.remove_user(self._org, user_id), connection)

    def users_with_role(self, role: str, *, connection: Connection | None = None) -> list[str]:
        return self._store.perform(directory_ops.users_with_role(self._org, role), connection)

    def put_org(
        self, data: dict[str, Any], *, connection: Connection | None = None
    ) -> dict[str, Any]:
        return self._store.perform(directory_ops.put_org(self._org, data), connection)

    def get_org(self, *, connection: Connection | None = None) -> dict[str, Any]:
        return self._store.perform(directory_ops.get_org(self._org), connection)
