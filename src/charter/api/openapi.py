"""The OpenAPI description of the JSON API, generated from the route table: each route's
request model and answer type give its schemas (pydantic's JSON schema), shared under
``components/schemas``."""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from charter.api.routes import ROUTES
from charter.api.schemas import Error

_REF = "#/components/schemas/{model}"


def _schema(kind: Any, mode: JsonSchemaMode, components: dict[str, Any]) -> dict[str, Any]:
    schema = TypeAdapter(kind).json_schema(mode=mode, ref_template=_REF)
    components.update(schema.pop("$defs", {}))
    title = kind.__name__ if isinstance(kind, type) else None
    if title is not None and schema.get("title") == title and "properties" in schema:
        components[title] = schema  # a named model: referenced, not repeated
        return {"$ref": _REF.format(model=title)}
    return schema


def _refusal(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {
        "$ref": _REF.format(model="Error")}}}}  # fmt: skip


@cache
def openapi() -> dict[str, Any]:
    components: dict[str, Any] = {}
    _schema(Error, "serialization", components)
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", route.path)
        ]
        ok: dict[str, Any] = {"description": "OK"}
        if route.response is not None:
            answer = _schema(route.response, "serialization", components)
            ok["content"] = {"application/json": {"schema": answer}}
        responses = {
            str(route.status): ok,
            "401": _refusal("No key, or an unknown or revoked key"),
            "403": _refusal("Refused by policy"),
            "404": _refusal("Not in the key's org"),
            "409": _refusal("A version or state conflict"),
            "422": _refusal(
                "Invalid input: REQUEST_INVALID names the field (also JSON nested past 100 "
                "levels); ARGUMENT_INVALID a number past PostgreSQL's range"
            ),
        }
        if "{" in route.path:
            responses["400"] = _refusal("A path parameter holds U+0000")
        operation: dict[str, Any] = {
            "summary": route.summary,
            "tags": [route.tag],
            "operationId": route.handler.__name__,
            "parameters": params,
            "responses": responses,
        }
        if route.model is not None:
            responses["413"] = _refusal(
                "REQUEST_TOO_LARGE: the body is past CHARTER_MAX_BODY_BYTES; "
                "DOCUMENT_TOO_LARGE: a document's data past its limit"
            )
            operation["requestBody"] = {
                "required": route.body_required,
                "content": {"application/json": {
                    "schema": _schema(route.model, "validation", components)}},
            }  # fmt: skip
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "charter", "version": metadata.version("charter")},
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "schemas": dict(sorted(components.items())),
        },
        "security": [{"apiKey": []}],
        "paths": paths,
    }
