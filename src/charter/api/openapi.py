"""The OpenAPI description of the JSON API, built from the routes' own registrations."""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any

from charter.api.routes import ROUTES

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "object", "properties": {
        "code": {"type": "string"}, "message": {"type": "string"}}}},
}  # fmt: skip


def openapi() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", route.path)
        ]
        operation: dict[str, Any] = {
            "summary": route.summary,
            "tags": [route.tag],
            "operationId": route.handler.__name__,
            "parameters": params,
            "responses": {
                str(route.status): {"description": "OK"},
                "401": {
                    "description": "No key, or an unknown or revoked key",
                    "content": {"application/json": {"schema": _ERROR}},
                },
                "403": {"description": "Refused by policy"},
                "404": {"description": "Not in the key's org"},
                "409": {"description": "A version or state conflict"},
                "422": {
                    "description": "Invalid input (also JSON nested past 100 levels, "
                    "a number past PostgreSQL's range)",
                    "content": {"application/json": {"schema": _ERROR}},
                },
            },
        }
        if "{" in route.path:
            operation["responses"]["400"] = {
                "description": "A path parameter holds U+0000",
                "content": {"application/json": {"schema": _ERROR}},
            }
        if route.body is not None:
            operation["responses"]["413"] = {
                "description": "REQUEST_TOO_LARGE: the body is past CHARTER_MAX_BODY_BYTES; "
                "DOCUMENT_TOO_LARGE: a document's data past its limit",
                "content": {"application/json": {"schema": _ERROR}},
            }
            operation["requestBody"] = {
                "required": route.body_required,
                "content": {"application/json": {"schema": route.body}},
            }
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "charter", "version": metadata.version("charter")},
        "components": {"securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}}},
        "security": [{"apiKey": []}],
        "paths": paths,
    }
