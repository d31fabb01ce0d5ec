"""/api/notifications: the key's actor's in-app notifications; mark them read."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api, bool_param, int_param
from charter.api.schemas import OneRead, Read, SomeIds
from charter.errors import NotificationNotFoundError
from charter.ops.notifications import Notification


@api("GET", "/api/notifications", "The key's actor's in-app notifications, newest first "
     "(?unread=true: the unread ones only; ?limit=, 100 by default)", "notifications",
     response=list[Notification])  # fmt: skip
async def list_notifications(request: Request, who: Principal, _: None) -> Any:
    return await who.client.notifications.list(
        who.actor,
        unread_only=bool_param(request, "unread"),
        limit=int_param(request, "limit", 100, low=1, high=1000),
    )


@api("POST", "/api/notifications/{notification_id}/read", "Mark one of the key's actor's "
     "notifications read", "notifications", response=OneRead)  # fmt: skip
async def read_notification(request: Request, who: Principal, _: None) -> Any:
    raw = request.path_params["notification_id"]
    if not (raw.isdigit() and len(raw) < 19):  # a bigint
        raise NotificationNotFoundError(
            f"No notification {raw!r} for {who.actor}; GET /api/notifications lists them."
        )
    await who.client.notifications.mark_read(who.actor, [int(raw)])
    return OneRead(id=int(raw), read=True)


@api("POST", "/api/notifications/read", "Mark the key's actor's notifications read: those in "
     "ids, or all of them without", "notifications", body=SomeIds, body_required=False,
     response=Read)  # fmt: skip
async def read_notifications(request: Request, who: Principal, body: SomeIds) -> Any:
    return Read(read=await who.client.notifications.mark_read(who.actor, body.ids))
