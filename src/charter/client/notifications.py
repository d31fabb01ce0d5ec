# Generated from notifications_async.py by tools/async_to_sync.py; do not edit.
# Edit notifications_async.py and run: python tools/async_to_sync.py
"""The notifications face of the client."""

from __future__ import annotations

import builtins
from typing import Any

from charter.client.notifications_async import AsyncNotifications as AsyncNotifications
from charter.db.store import Store
from charter.ops import notifications as notifications_ops
from charter.ops.notifications import Notification


class Notifications:
    """In-app notifications (``notification`` nodes on channel ``in_app``), per user."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

    def list(
        self, user: str, *, unread_only: bool = False, limit: int = 100
    ) -> builtins.list[Notification]:
        """The user's notifications, newest first."""
        op = notifications_ops.list_notifications(self._org, user, unread_only, limit)
        return self._store.perform(op)

    def mark_read(self, user: str, ids: Any = None) -> builtins.list[int]:
        """Mark the user's notifications ``ids`` (all of them when None) read; returns the ids
        that were unread. An id that is not the user's is refused and nothing is marked."""
        return self._store.perform(notifications_ops.mark_notifications_read(self._org, user, ids))
