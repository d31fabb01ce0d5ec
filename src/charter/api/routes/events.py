"""/api/events/{key}: inbound events, verified by their signature before the body is read."""

from __future__ import annotations

import hmac
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from charter.api.auth import Principal
from charter.api.http_errors import error_response
from charter.api.routing import api
from charter.api.schemas import AnyObject
from charter.ops.side_effects import (
    EVENT_TIMESTAMP_HEADER,
    EVENT_TOLERANCE_SECONDS,
    event_signature,
)


async def signed(request: Request, who: Principal) -> Response | None:
    """None when the event carries the org's signature of its time, key and body."""
    raw = await request.body()
    stamp = request.headers.get("x-charter-timestamp", "").strip()
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > EVENT_TOLERANCE_SECONDS:
        return error_response(
            401, "SIGNATURE_INVALID",
            f"{EVENT_TIMESTAMP_HEADER} must be the time of signing in Unix seconds, within "
            f"{EVENT_TOLERANCE_SECONDS // 60} minutes of the server's clock (got {stamp[:40]!r}); "
            "sign the event again with the current time",
        )  # fmt: skip
    secret = await who.client.side_effects.webhook_secret()
    expected = event_signature(secret, stamp, request.path_params["key"], raw)
    if not hmac.compare_digest(expected, request.headers.get("x-charter-signature", "")):
        return error_response(
            401, "SIGNATURE_INVALID",
            "X-Charter-Signature must be sha256=<hex HMAC-SHA256, with the org's webhook "
            f"secret, of '<{EVENT_TIMESTAMP_HEADER}>.<event key>.' followed by the body>",
        )  # fmt: skip
    return None


@api("POST", "/api/events/{key}", "An inbound event, signed with the org's webhook secret "
     "(X-Charter-Timestamp: unix seconds, within 5 minutes; X-Charter-Signature: sha256=HMAC "
     "of '<timestamp>.<key>.' and the body); idempotent by X-Event-Id; "
     "X-Document-Id names the document it is for (only its waits take it)", "events",
     body=AnyObject, response=dict[str, Any], status=202, guard=signed)  # fmt: skip
async def receive_event(request: Request, who: Principal, body: AnyObject) -> Any:
    return await who.client.events.send(
        request.path_params["key"],
        body.root,
        event_id=request.headers.get("x-event-id"),
        document_id=request.headers.get("x-document-id"),
    )
