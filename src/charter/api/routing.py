"""How an endpoint of the JSON API is declared and run. Each endpoint registers its method,
path, summary, tag, the pydantic model of its request body and the type of its answer; the
same registration validates the request (:func:`parse_body`) and describes it in OpenAPI
(:mod:`charter.api.openapi`), so the schema is written once."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from charter.api.auth import Principal, principal
from charter.api.http_errors import RequestInvalid, error_of, error_response
from charter.api.schemas import out_of_range
from charter.payloads import MAX_DEPTH

Handler = Callable[[Request, Principal, Any], Awaitable[Any]]
Guard = Callable[[Request, Principal], Awaitable[Response | None]]


@dataclass(frozen=True)
class ApiRoute:
    method: str
    path: str
    summary: str
    tag: str
    handler: Handler
    model: type[BaseModel] | None = None  # the request body's model
    response: Any = None  # the answer's type (a pydantic model, a dataclass, a list of one)
    status: int = 200
    body_required: bool = True  # False: the body may be left out (every field optional)
    guard: Guard | None = None  # runs before the body is read (an event's signature)

    @cached_property
    def body(self) -> dict[str, Any] | None:
        """The JSON schema of the request body, from its model."""
        return None if self.model is None else self.model.model_json_schema()


ROUTES: list[ApiRoute] = []


def api(
    method: str, path: str, summary: str, tag: str, *,
    body: type[BaseModel] | None = None, response: Any = None, status: int = 200,
    body_required: bool = True, guard: Guard | None = None,
) -> Callable[[Handler], Handler]:  # fmt: skip
    """Register the decorated ``handler(request, principal, body)``: ``body`` is the
    validated ``body`` model (None for an endpoint without one)."""

    def register(handler: Handler) -> Handler:
        ROUTES.append(
            ApiRoute(
                method, path, summary, tag, handler, body, response, status, body_required, guard
            )
        )
        return handler

    return register


def jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def snake_keys(value: Any) -> Any:
    """The API speaks snake_case throughout, also for figures the database names in camelCase."""
    if isinstance(value, dict):
        return {
            re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): snake_keys(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object. Nesting deeper than charter's limit (MAX_DEPTH levels
    for the values a body carries, one more for the body itself) is refused before it is
    decoded, so no decoder recurses that deep."""
    raw = await request.body()
    if not raw:
        return {}
    if _brackets_deeper_than(raw, MAX_DEPTH + 1):
        raise RequestInvalid(
            f"the body nests arrays and objects more than {MAX_DEPTH} levels deep; charter "
            f"accepts at most {MAX_DEPTH}. Flatten it, or store the data elsewhere and pass a "
            "reference."
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RequestInvalid(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RequestInvalid("the body must be a JSON object")
    return data


_BRACKETS = re.compile(rb'[\[\]{}]|"(?:[^"\\]|\\.)*"')


def _brackets_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether JSON text opens more than ``limit`` arrays or objects at once (brackets
    inside strings do not count). Text that is no JSON is left to the decoder."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for token in _BRACKETS.finditer(raw):
        char = token.group()[:1]
        if char in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif char in b"]}":
            depth -= 1
    return False


async def parse_body(request: Request, model: type[BaseModel]) -> BaseModel:
    """The body as ``model``; its first error as charter's: a whole number past PostgreSQL's
    range is ARGUMENT_INVALID, anything else REQUEST_INVALID, each naming the field."""
    data = await json_body(request)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _refusal(exc.errors()[0]) from None


def _refusal(error: Any) -> Exception:
    where = ".".join(str(part) for part in error["loc"]) or "the body"
    kind, given = error["type"], error.get("input")
    if kind in ("greater_than_equal", "less_than_equal") and isinstance(given, int):
        return out_of_range(str(error["loc"][0]), error["loc"][1:])
    if kind == "missing" or (given is None and len(error["loc"]) == 1):
        return RequestInvalid(f"the body needs {where!r}")
    shown = "null" if given is None else type(given).__name__
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return RequestInvalid(f"{where!r} has the wrong type ({shown}): {error['msg']}")
    return RequestInvalid(f"{where!r} is invalid: {error['msg']}")


def int_param(
    request: Request, name: str, default: int, *, low: int = 0, high: int = 1_000_000
) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise RequestInvalid(f"query parameter {name}={raw!r} is not a whole number") from None
    if not low <= value <= high:
        raise RequestInvalid(f"query parameter {name}={value} is out of range ({low} to {high})")
    return value


def bool_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw.lower() in ("", "0", "false", "no"):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise RequestInvalid(f"query parameter {name}={raw!r} is not true or false")


def endpoint(route: ApiRoute) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        try:
            who = await principal(request)
            refused = await route.guard(request, who) if route.guard else None
            if refused is not None:
                return refused
            body = await parse_body(request, route.model) if route.model else None
            result = await route.handler(request, who, body)
        except Exception as exc:
            answer = error_of(exc)
            if answer is None:
                raise
            response = error_response(*answer)
            if answer[0] == 401:
                response.headers["WWW-Authenticate"] = "Bearer"
            return response
        if isinstance(result, Response):
            return result
        return JSONResponse(jsonable(result), status_code=route.status)

    return run


def starlette_routes() -> list[Route]:
    # Named apart from the dashboard's pages: "api:" and the handler's name.
    return [
        Route(r.path, endpoint(r), methods=[r.method], name=f"api:{r.handler.__name__}")
        for r in ROUTES
    ]
