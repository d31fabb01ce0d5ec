"""Notification operations: a user's notifications and marking them read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from charter.db.store import Call, Operation, first_value, json_rows
from charter.ops.arguments import effect_ids, text_argument, whole_number
from charter.ops.run_model import timestamp


@dataclass(frozen=True)
class Notification:
    id: int
    user: str
    subject: str | None
    body: str
    run_id: str | None
    node: str | None
    effect_id: int
    created_at: datetime | None
    read_at: datetime | None

    @property
    def read(self) -> bool:
        return self.read_at is not None


def _notification(data: dict[str, Any]) -> Notification:
    return Notification(
        id=data["id"],
        user=data["user"],
        subject=data.get("subject"),
        body=data["body"],
        run_id=data.get("runId"),
        node=data.get("node"),
        effect_id=data["effectId"],
        created_at=timestamp(data.get("createdAt")),
        read_at=timestamp(data.get("readAt")),
    )


def list_notifications(
    org_id: str, user: str, unread_only: bool, limit: int
) -> Operation[list[Notification]]:
    params = {
        "org_id": org_id,
        "user_id": text_argument(user, "user"),
        "unread_only": bool(unread_only),
        "limit": whole_number(limit, "limit"),
    }
    rows = yield Call("list_notifications", params, json_rows)
    return [_notification(row) for row in rows]


def mark_notifications_read(org_id: str, user: str, ids: Any) -> Operation[list[int]]:
    params = {
        "org_id": org_id,
        "user_id": text_argument(user, "user"),
        "ids": None if ids is None else effect_ids(ids, "notifications.mark_read"),
    }
    return list((yield Call("mark_notifications_read", params, first_value)))
