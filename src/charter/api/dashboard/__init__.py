"""The dashboard: server-rendered pages (Jinja2) over the same client calls as the API, one
module per resource. Every route has a name; pages link with ``url_for(name)``, so
``create_app`` serves it under any prefix."""

from __future__ import annotations

from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from charter.api.dashboard import (
    dead_letters,
    definitions,
    documents,
    health,
    inbox,
    notifications,
    runs,
)
from charter.api.dashboard.core import ASSETS, Sessions, sign_in, sign_out

__all__ = ["Sessions", "dashboard_routes"]


def dashboard_routes() -> list[Route | Mount]:
    return [
        Route("/", health.health_page, methods=["GET"], name="health"),
        Route("/sign-in", sign_in, methods=["GET", "POST"], name="sign_in"),
        Route("/sign-out", sign_out, methods=["POST"], name="sign_out"),
        Route("/stuck/{run_id}", health.stuck_action, methods=["POST"], name="stuck"),
        Route("/runs", runs.runs_page, methods=["GET"], name="runs"),
        Route("/runs/{run_id}", runs.run_page, methods=["GET", "POST"], name="run"),
        Route("/documents", documents.documents_page, methods=["GET"], name="documents"),
        Route(
            "/documents/{document_id}",
            documents.document_page,
            methods=["GET", "POST"],
            name="document",
        ),
        Route("/inbox", inbox.inbox_page, methods=["GET"], name="inbox"),
        Route("/inbox/{request_id}", inbox.approval_page, methods=["GET"], name="approval"),
        Route("/inbox/{request_id}/decision", inbox.decide, methods=["POST"], name="decide"),
        Route(
            "/dead-letters",
            dead_letters.dead_letters_page,
            methods=["GET", "POST"],
            name="dead_letters",
        ),
        Route(
            "/notifications",
            notifications.notifications_page,
            methods=["GET", "POST"],
            name="notifications",
        ),
        Route("/definitions", definitions.definitions_page, methods=["GET"], name="definitions"),
        Route(
            "/definitions/{entity_type}/builder",
            definitions.builder_page,
            methods=["GET"],
            name="definition_builder",
        ),
        Mount("/static", StaticFiles(directory=str(ASSETS / "static")), name="static"),
    ]
