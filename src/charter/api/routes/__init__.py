"""The JSON API, one module per resource; importing them registers their endpoints in
:data:`ROUTES`. Within a module the order is the order Starlette matches in (``/inbox``
before ``/{request_id}``); no two modules share a path prefix, so theirs does not matter."""

from charter.api.routes import (  # noqa: F401  (each registers its endpoints)
    approvals,
    dead_letters,
    definitions,
    documents,
    events,
    health,
    notifications,
    runs,
    templates,
)
from charter.api.routing import ROUTES, ApiRoute, starlette_routes

__all__ = ["ROUTES", "ApiRoute", "starlette_routes"]
