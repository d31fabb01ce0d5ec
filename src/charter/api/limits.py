"""What the server refuses before a handler sees it, each with the JSON error shape: a body
larger than ``CHARTER_MAX_BODY_BYTES`` (413, from its Content-Length, or counted as a chunked
body streams in, so it is never held whole), a NUL in the path (400), an unknown route (404)
or method (405). Also the headers every answer carries, so the dashboard cannot be framed,
sniffed or made to run a script from elsewhere."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from charter.api.http_errors import error_response

SECURITY_HEADERS = {
    # Scripts, styles and images only from the server itself; no plugins, no framing.
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
}


class RequestTooLarge(Exception):
    """The body grew past the limit while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def too_large(limit: int) -> Response:
    return error_response(
        413,
        "REQUEST_TOO_LARGE",
        f"The request body is larger than this server accepts ({limit} bytes, "
        "CHARTER_MAX_BODY_BYTES). Send less: store large files elsewhere and pass a reference.",
    )


class Limits:
    """ASGI middleware: the body limit, NUL-free paths and the security headers."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *(
                        (name.encode(), value.encode())
                        for name, value in SECURITY_HEADERS.items()
                        if name.encode() not in present
                    ),
                ]
            await send(message)

        limit = self.max_body_bytes
        if "\x00" in scope.get("path", ""):
            answer = error_response(
                400,
                "REQUEST_INVALID",
                "The path contains the character U+0000 (%00), which no id or key may hold; "
                "remove it.",
            )
            await answer(scope, receive, send_with_headers)
            return
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await too_large(limit)(scope, receive, send_with_headers)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise RequestTooLarge(limit)
            return message

        await self.app(scope, counted, send_with_headers)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def request_too_large(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestTooLarge)
    return too_large(exc.limit)


_REASONS = {404: "ROUTE_NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405 (and any other HTTPException) in the JSON error shape."""
    assert isinstance(exc, HTTPException)
    code = _REASONS.get(exc.status_code, "REQUEST_INVALID")
    if exc.status_code == 404:
        message = f"No such page or endpoint: {request.url.path}. /openapi.json lists the API."
    elif exc.status_code == 405:
        message = (
            f"{request.url.path} does not take {request.method}; it takes "
            f"{(exc.headers or {}).get('Allow', 'other methods')}. /openapi.json lists the API."
        )
    else:
        message = str(exc.detail)
    answer = error_response(exc.status_code, code, message)
    answer.headers.update(exc.headers or {})
    return answer


EXCEPTION_HANDLERS: dict[Any, Any] = {
    RequestTooLarge: request_too_large,
    HTTPException: http_exception,
}
