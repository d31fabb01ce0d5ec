"""The ASGI application: the JSON API under /api (:mod:`charter.api.routes`, one module per
resource), /metrics, /openapi.json (generated from the routes' pydantic models), and the
dashboard (:mod:`charter.api.dashboard`) at /. Mount it under any prefix: the dashboard's
links and redirects are built from route names. One AsyncClient
(one pool, on the server's database role — charter_app in production) serves every org;
each request acts for its key's org as its key's actor. On the embedded default the role
is ``charter_serve``, a login member of charter_app that charter makes and owns."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from charter import settings
from charter.api import routes
from charter.api.auth import principal
from charter.api.dashboard import Sessions, dashboard_routes
from charter.api.http_errors import error_of, error_response
from charter.api.limits import EXCEPTION_HANDLERS, Limits
from charter.api.metrics import metrics_text
from charter.api.openapi import openapi
from charter.client.client import AsyncClient
from charter.db import connection, embedded


async def _metrics(request: Request) -> Response:
    try:
        who = await principal(request)
        body = await metrics_text(who)
    except Exception as exc:
        answer = error_of(exc)
        if answer is None:
            raise
        return error_response(*answer)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


async def _openapi(request: Request) -> Response:
    return JSONResponse(openapi())


def _embedded_serve_url() -> str:
    return embedded.ensure_serve_role(embedded.ensure_running())


def create_app(
    database_url: str | None = None,
    *,
    pool_size: int | None = None,
    migrate: bool = False,
    session_secret: str | None = None,
    secure_cookies: bool | None = None,
    max_body_bytes: int | None = None,
) -> Starlette:
    """The server for ``database_url`` (else CHARTER_DATABASE_URL, else the embedded one).
    On the embedded server it runs as ``charter_serve`` (a member of charter_app; the
    owner migrates first). A URL given here, or in CHARTER_DATABASE_URL, is used as it is:
    give it a member of charter_app (``charter serve`` refuses an owner's URL unless told
    ``--as-owner``).
    ``session_secret`` signs the dashboard's cookie (``CHARTER_SESSION_SECRET``; a random
    one per process when unset). ``secure_cookies`` (``CHARTER_SECURE_COOKIES=1``) marks the
    cookie Secure: set it whenever the dashboard is served over HTTPS. A request body larger
    than ``max_body_bytes`` (``CHARTER_MAX_BODY_BYTES``, default 1 MiB) is answered 413
    ``REQUEST_TOO_LARGE`` without being read whole."""
    if max_body_bytes is None:
        max_body_bytes = settings.max_body_bytes()
    secret = session_secret or settings.session_secret() or secrets.token_hex(32)
    if secure_cookies is None:
        secure_cookies = settings.secure_cookies()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        url = database_url
        if url is None and connection.explicit_target() is None:
            url = await asyncio.to_thread(_embedded_serve_url)
        client = AsyncClient(url, migrate=migrate, pool_size=pool_size)
        app.state.client = client
        app.state.sessions = Sessions()
        try:
            yield {}
        finally:
            await client.close()

    return Starlette(
        routes=[
            *routes.starlette_routes(),
            Route("/metrics", _metrics, methods=["GET"]),
            Route("/openapi.json", _openapi, methods=["GET"]),
            *dashboard_routes(),
        ],
        middleware=[
            Middleware(Limits, max_body_bytes=max_body_bytes),
            Middleware(
                SessionMiddleware,
                secret_key=secret,
                session_cookie="charter_session",
                same_site="strict",
                https_only=secure_cookies,
                max_age=int(Sessions.LIFETIME),  # as long as the server keeps the session
            ),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
