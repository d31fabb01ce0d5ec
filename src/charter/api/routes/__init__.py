"""The JSON API, one module per resource; importing them registers their endpoints in
:data:`ROUTES` (in this order, which is the order Starlette matches them in)."""

from charter.api.routes import (  # noqa: F401  (each registers its endpoints)
    approvals,
    dead_letters,
    definitions,
    documents,
    events,
    health,
    notifications,
    runs,
)
from charter.api.routing import ROUTES, ApiRoute, starlette_routes

__all__ = ["ROUTES", "ApiRoute", "starlette_routes"]
