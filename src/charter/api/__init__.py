"""`charter serve`: the ops surface as an ASGI application (Starlette) — a JSON API with an
OpenAPI description, Prometheus metrics, and (with its issue) the dashboard. Mount
``create_app(...)`` in your own ASGI app, or run ``charter serve``."""

from charter.api.app import create_app

__all__ = ["create_app"]
