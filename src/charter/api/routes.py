"""The JSON API: one function per endpoint, each registered with what the OpenAPI
description says about it. Every endpoint runs as the request's key: its actor, its org."""

from __future__ import annotations

import dataclasses
import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from charter.api.auth import Principal, Unauthenticated, principal
from charter.api.http_errors import charter_error_response, error_response
from charter.db.store import Call, first_value
from charter.errors import (
    ArgumentError,
    CharterError,
    DeadLetterNotFoundError,
    NotificationNotFoundError,
    RunNotFoundError,
)
from charter.ops import runs as ops
from charter.ops.side_effects import (
    EVENT_TIMESTAMP_HEADER,
    EVENT_TOLERANCE_SECONDS,
    event_signature,
)
from charter.payloads import MAX_DEPTH

Handler = Callable[[Request, Principal], Awaitable[Any]]


@dataclass(frozen=True)
class ApiRoute:
    method: str
    path: str
    summary: str
    tag: str
    handler: Handler
    body: dict[str, Any] | None = None  # JSON schema of the request body
    status: int = 200
    body_required: bool = True  # False: the body may be left out (every field optional)


ROUTES: list[ApiRoute] = []


def api(
    method: str, path: str, summary: str, tag: str, *,
    body: dict[str, Any] | None = None, status: int = 200, body_required: bool = True,
) -> Callable[[Handler], Handler]:  # fmt: skip
    def register(handler: Handler) -> Handler:
        ROUTES.append(ApiRoute(method, path, summary, tag, handler, body, status, body_required))
        return handler

    return register


def jsonable(value: Any) -> Any:
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


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


class BadRequest(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def body_of(request: Request) -> dict[str, Any]:
    """The request's JSON object. Nesting deeper than charter's limit (MAX_DEPTH levels
    for the values a body carries, one more for the body itself) is refused before it is
    decoded, so no decoder recurses that deep."""
    raw = await request.body()
    if not raw:
        return {}
    if _brackets_deeper_than(raw, MAX_DEPTH + 1):
        raise BadRequest(
            f"the body nests arrays and objects more than {MAX_DEPTH} levels deep; charter "
            f"accepts at most {MAX_DEPTH}. Flatten it, or store the data elsewhere and pass a "
            "reference."
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
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


def _field(
    data: dict[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = True
) -> Any:
    value = data.get(name)
    if value is None:
        if required:
            raise BadRequest(f"the body needs {name!r}")
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise BadRequest(f"{name!r} has the wrong type ({type(value).__name__})")
    if kind is int and isinstance(value, int) and not -(2**31) <= value <= 2**31 - 1:
        # Named as the body names it (the store would name the SQL parameter).
        raise ArgumentError(
            f"{name!r} is out of range: versions are whole numbers from -2147483648 to "
            "2147483647 (PostgreSQL's integer). Send the version the document or request has."
        )
    return value


def _int_param(
    request: Request, name: str, default: int, *, low: int = 0, high: int = 1_000_000
) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"query parameter {name}={raw!r} is not a whole number") from None
    if not low <= value <= high:
        raise BadRequest(f"query parameter {name}={value} is out of range ({low} to {high})")
    return value


def endpoint(route: ApiRoute) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        try:
            who = await principal(request)
            result = await route.handler(request, who)
        except Unauthenticated as exc:
            response = error_response(401, "UNAUTHENTICATED", exc.message)
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        except BadRequest as exc:
            return error_response(422, "REQUEST_INVALID", exc.message)
        except CharterError as exc:
            return charter_error_response(exc)
        if isinstance(result, Response):
            return result
        return JSONResponse(jsonable(result), status_code=route.status)

    return run


def starlette_routes() -> list[Route]:
    return [Route(r.path, endpoint(r), methods=[r.method]) for r in ROUTES]


# -- health ------------------------------------------------------------------------------


@api("GET", "/api/health", "The org's workflow health and stuck instances", "health")
async def get_health(request: Request, who: Principal) -> Any:
    report = await who.client.health.report(
        stuck_minutes=_int_param(request, "stuck_minutes", 10, low=1, high=525_600)
    )
    return snake_keys({k: v for k, v in jsonable(report).items() if k != "raw"})


@api(
    "GET",
    "/api/health/waiting",
    "Instances waiting (not stuck) at least `hours`, by what they wait for",
    "health",
)
async def get_health_waiting(request: Request, who: Principal) -> Any:
    waiting = await who.client.health.waiting_longer_than(
        hours=_int_param(request, "hours", 0, low=0, high=1_000_000),
        stuck_minutes=_int_param(request, "stuck_minutes", 10, low=1, high=525_600),
    )
    return snake_keys(jsonable(waiting))


# -- runs --------------------------------------------------------------------------------


async def _own_run(who: Principal, run_id: str) -> None:
    owned = await who.client.store.execute(
        Call("runs_of_org", {"org_id": who.org_id, "run_ids": [run_id]}, first_value)
    )
    if run_id not in (owned or []):
        raise RunNotFoundError(f"Run {run_id!r} does not exist in org {who.org_id}.")


_RUN_BODY = {
    "type": "object",
    "required": ["flow"],
    "properties": {"flow": {"type": "string"}, "input": {}, "run_id": {"type": "string"}},
}


@api("POST", "/api/runs", "Start a run of a published flow", "runs", body=_RUN_BODY, status=201)
async def start_run(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    run_id = await who.client.start(
        _field(data, "flow", str),
        data.get("input"),
        run_id=_field(data, "run_id", str, required=False),
    )
    return {"id": run_id}


@api("GET", "/api/runs", "List the org's runs (newest first)", "runs")
async def list_runs(request: Request, who: Principal) -> Any:
    op = ops.list_runs(
        request.query_params.get("flow"),
        request.query_params.get("status"),
        _int_param(request, "limit", 100, high=1000),
        request.query_params.get("after"),
        org_id=who.org_id,
    )
    return await who.client.store.perform(op)


@api("GET", "/api/runs/{run_id}", "A run with its steps and evidence", "runs")
async def get_run(request: Request, who: Principal) -> Any:
    run_id = request.path_params["run_id"]
    await _own_run(who, run_id)
    return await who.client.get_run(run_id)


_REASON_BODY = {"type": "object", "properties": {"reason": {"type": "string"}}}


@api("POST", "/api/runs/{run_id}/cancel",
     "Cancel a run (a document's instance: its approvals close, its undelivered effects stop)",
     "runs", body=_REASON_BODY, body_required=False)  # fmt: skip
async def cancel_run(request: Request, who: Principal) -> Any:
    run_id = request.path_params["run_id"]
    reason = _field(await body_of(request), "reason", str, required=False)  # bad input first
    await _own_run(who, run_id)
    who.require_admin("cancel runs")
    return {"id": run_id, "status": await who.client.cancel(run_id, actor=who.actor, reason=reason)}


@api("POST", "/api/runs/{run_id}/retry", "Retry a failed run (or document instance)", "runs")
async def retry_run(request: Request, who: Principal) -> Any:
    run_id = request.path_params["run_id"]
    await _own_run(who, run_id)
    return {"id": run_id, "status": await who.client.retry(run_id, actor=who.actor)}


# -- documents ---------------------------------------------------------------------------

_CREATE_BODY = {
    "type": "object",
    "required": ["entity_type", "data"],
    "properties": {"entity_type": {"type": "string"}, "data": {"type": "object"},
                   "id": {"type": "string"}, "reason": {"type": "string"}},
}  # fmt: skip
_CHANGE_BODY = {
    "type": "object",
    "required": ["changes"],
    "properties": {"changes": {"type": "object"}, "expected_version": {"type": "integer"},
                   "reason": {"type": "string"}},
}  # fmt: skip
_TRANSITION_BODY = {
    "type": "object",
    "required": ["gate"],
    "properties": {"gate": {"type": "string"}, "to": {"type": "string"},
                   "expected_version": {"type": "integer"}, "reason": {"type": "string"}},
}  # fmt: skip
_MUTATE_BODY = {
    "type": "object",
    "required": ["action"],
    "properties": {"action": {"type": "string"}, "changes": {"type": "object"},
                   "to": {"type": "string"}, "expected_version": {"type": "integer"},
                   "reason": {"type": "string"}},
}  # fmt: skip


@api("POST", "/api/documents", "Create a document (as the key's actor)", "documents",
     body=_CREATE_BODY, status=201)  # fmt: skip
async def create_document(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.documents.create(
        _field(data, "entity_type", str), _field(data, "data", dict), actor=who.actor,
        id=_field(data, "id", str, required=False),
        reason=_field(data, "reason", str, required=False),
    )  # fmt: skip


@api("GET", "/api/documents", "List the org's documents", "documents")
async def list_documents(request: Request, who: Principal) -> Any:
    return await who.client.documents.list(
        entity_type=request.query_params.get("entity_type"),
        state=request.query_params.get("state"),
        limit=_int_param(request, "limit", 100),
        after=request.query_params.get("after"),
    )


@api("GET", "/api/documents/{document_id}", "A document, its workflow and what it waits for",
     "documents")  # fmt: skip
async def get_document(request: Request, who: Principal) -> Any:
    version = request.query_params.get("version")
    return await who.client.documents.get(
        request.path_params["document_id"],
        _int_param(request, "version", 0, low=1, high=2**31 - 1) if version else None,
    )


@api("GET", "/api/documents/{document_id}/history", "A document's audit trail", "documents")
async def document_history(request: Request, who: Principal) -> Any:
    return await who.client.documents.history(request.path_params["document_id"])


@api("PATCH", "/api/documents/{document_id}", "Update a document's fields", "documents",
     body=_CHANGE_BODY)  # fmt: skip
async def update_document(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.documents.update(
        request.path_params["document_id"], _field(data, "changes", dict), actor=who.actor,
        expected_version=_field(data, "expected_version", int, required=False),
        reason=_field(data, "reason", str, required=False),
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/transitions", "Pass a gate", "documents",
     body=_TRANSITION_BODY)  # fmt: skip
async def transition_document(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.documents.transition(
        request.path_params["document_id"], _field(data, "gate", str), actor=who.actor,
        to=_field(data, "to", str, required=False),
        expected_version=_field(data, "expected_version", int, required=False),
        reason=_field(data, "reason", str, required=False),
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/mutate", "Any action the contract declares",
     "documents", body=_MUTATE_BODY)  # fmt: skip
async def mutate_document(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.documents.mutate(
        request.path_params["document_id"], _field(data, "action", str),
        _field(data, "changes", dict, required=False), actor=who.actor,
        to=_field(data, "to", str, required=False),
        expected_version=_field(data, "expected_version", int, required=False),
        reason=_field(data, "reason", str, required=False),
    )  # fmt: skip


@api("POST", "/api/documents/{document_id}/amend", "Amend a document (re-approval follows)",
     "documents", body=_CHANGE_BODY)  # fmt: skip
async def amend_document(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.documents.amend(
        request.path_params["document_id"], _field(data, "changes", dict), actor=who.actor,
        reason=_field(data, "reason", str, required=False),
    )  # fmt: skip


async def _instance_act(request: Request, who: Principal, act: str) -> Any:
    document_id = request.path_params["document_id"]
    who.require_admin(f"{act} a document's workflow")
    reason = _field(await body_of(request), "reason", str, required=False)
    documents = who.client.documents
    act_on = {"pause": documents.pause, "resume": documents.resume}.get(act, documents.restart)
    return await act_on(document_id, actor=who.actor, reason=reason)


@api("POST", "/api/documents/{document_id}/pause",
     "Pause the document's workflow instance (nothing runs; transitions are refused)",
     "documents", body=_REASON_BODY, body_required=False)  # fmt: skip
async def pause_document(request: Request, who: Principal) -> Any:
    return await _instance_act(request, who, "pause")


@api("POST", "/api/documents/{document_id}/resume", "Resume its paused workflow instance",
     "documents", body=_REASON_BODY, body_required=False)  # fmt: skip
async def resume_document(request: Request, who: Principal) -> Any:
    return await _instance_act(request, who, "resume")


@api("POST", "/api/documents/{document_id}/restart",
     "Start a new workflow instance (after a cancel or failure) at the document's state",
     "documents", body=_REASON_BODY, body_required=False)  # fmt: skip
async def restart_document(request: Request, who: Principal) -> Any:
    return await _instance_act(request, who, "restart")


# -- approvals ---------------------------------------------------------------------------

_DECIDE_BODY = {
    "type": "object",
    "required": ["decision", "version"],
    "properties": {"decision": {"enum": ["approved", "rejected", "abstained"]},
                   "version": {"type": "integer"}, "comment": {"type": "string"}},
}  # fmt: skip


@api("GET", "/api/approvals/inbox", "What waits for the key's actor to decide", "approvals")
async def approval_inbox(request: Request, who: Principal) -> Any:
    return await who.client.approvals.inbox(who.actor)


@api("GET", "/api/approvals/{request_id}", "An approval request", "approvals")
async def get_approval(request: Request, who: Principal) -> Any:
    return await who.client.approvals.get(request.path_params["request_id"])


@api("POST", "/api/approvals/{request_id}/decision", "Approve, reject or abstain on the pinned "
     "version", "approvals", body=_DECIDE_BODY)  # fmt: skip
async def decide_approval(request: Request, who: Principal) -> Any:
    data = await body_of(request)
    return await who.client.approvals.decide(
        request.path_params["request_id"], _field(data, "decision", str), actor=who.actor,
        entity_version=_field(data, "version", int),
        comment=_field(data, "comment", str, required=False),
    )  # fmt: skip


@api("GET", "/api/approvals/{request_id}/snapshot", "The document as it was at the pinned "
     "version", "approvals")  # fmt: skip
async def approval_snapshot(request: Request, who: Principal) -> Any:
    return await who.client.approvals.snapshot(request.path_params["request_id"])


@api("GET", "/api/approvals/{request_id}/diff", "What changed since the last approved version",
     "approvals")  # fmt: skip
async def approval_diff(request: Request, who: Principal) -> Any:
    return await who.client.approvals.diff(request.path_params["request_id"])


# -- events ------------------------------------------------------------------------------


@api("POST", "/api/events/{key}", "An inbound event, signed with the org's webhook secret "
     "(X-Charter-Timestamp: unix seconds, within 5 minutes; X-Charter-Signature: sha256=HMAC "
     "of '<timestamp>.<key>.' and the body); idempotent by X-Event-Id; "
     "X-Document-Id names the document it is for (only its waits take it)", "events",
     body={"type": "object"}, status=202)  # fmt: skip
async def receive_event(request: Request, who: Principal) -> Any:
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
    payload = await body_of(request)
    return await who.client.events.send(
        request.path_params["key"],
        payload,
        event_id=request.headers.get("x-event-id"),
        document_id=request.headers.get("x-document-id"),
    )


# -- definitions -------------------------------------------------------------------------

_PUBLISH_BODY = {
    "type": "object",
    "required": ["contract"],
    "properties": {"contract": {"type": "object"}, "org_definition": {"type": "object"}},
}


@api("POST", "/api/definitions", "Publish an org definition on a published contract (a new "
     "contract needs a platform key)", "definitions", body=_PUBLISH_BODY, status=201)  # fmt: skip
async def publish_definition(request: Request, who: Principal) -> Any:
    # Contracts are the platform's: an org's key may only find one published (the client
    # for its org refuses a new one with PERMISSION_DENIED); a platform key's may publish.
    who.require_admin("publish definitions")
    data = await body_of(request)
    return await who.client.definitions.publish(
        _field(data, "contract", dict), _field(data, "org_definition", dict, required=False)
    )


@api("POST", "/api/definitions/drafts", "Save an org definition as a draft", "definitions",
     body={"type": "object"}, status=201)  # fmt: skip
async def save_draft(request: Request, who: Principal) -> Any:
    who.require_admin("save definition drafts")
    return await who.client.definitions.save_draft(await body_of(request))


@api("POST", "/api/definitions/{version_id}/archive", "Archive a definition version",
     "definitions")  # fmt: skip
async def archive_definition(request: Request, who: Principal) -> Any:
    who.require_admin("archive definitions")
    return await who.client.definitions.archive(request.path_params["version_id"])


@api("GET", "/api/definitions", "Entity types, the org's versions, and per-slot diffs of the "
     "current effective workflows against their envelopes", "definitions")  # fmt: skip
async def list_definitions(request: Request, who: Principal) -> Any:
    from charter.api.definitions_view import overview

    return await overview(who)


@api("GET", "/api/definitions/{entity_type}/diff", "What the org changed, by slot (the diff "
     "view)", "definitions")  # fmt: skip
async def definition_diff(request: Request, who: Principal) -> Any:
    from charter.api.definitions_view import overview
    from charter.errors import DefinitionNotFoundError

    for entry in await overview(who):
        if entry["entity_type"] == request.path_params["entity_type"] and entry["diff"]:
            return entry["diff"]
    raise DefinitionNotFoundError(
        f"Org {who.org_id} has no effective workflow for {request.path_params['entity_type']!r}."
    )


@api("GET", "/api/definitions/{entity_type}/current", "The definition an entity type runs now "
     "and the envelope version the org is on", "definitions")  # fmt: skip
async def current_definition(request: Request, who: Principal) -> Any:
    return await who.client.definitions.current(request.path_params["entity_type"])


@api("POST", "/api/definitions/{entity_type}/rebase", "Move the org onto the newest contract, "
     "its definition recompiled on the new envelope", "definitions")  # fmt: skip
async def rebase_definition(request: Request, who: Principal) -> Any:
    who.require_admin("rebase definitions")
    return await who.client.definitions.rebase(request.path_params["entity_type"])


# -- dead letters ------------------------------------------------------------------------

_IDS_BODY = {
    "type": "object",
    "required": ["ids"],
    "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
}


@api("GET", "/api/dead-letters", "Side effects out of attempts (?run_id=: one run's)",
     "dead letters")  # fmt: skip
async def list_dead_letters(request: Request, who: Principal) -> Any:
    letters = await who.client.dead_letters.list(
        limit=_int_param(request, "limit", 100),
        run_id=request.query_params.get("run_id") or None,
    )
    # Secret-carrying request headers and receivers' response bodies are for admins only.
    return letters if who.admin else [letter.redacted() for letter in letters]


@api("GET", "/api/dead-letters/{effect_id}", "One dead letter: its request, last error and "
     "what the receiver answered", "dead letters")  # fmt: skip
async def show_dead_letter(request: Request, who: Principal) -> Any:
    raw = request.path_params["effect_id"]
    known = raw.isdigit() and len(raw) < 19  # a bigint
    effect = await who.client.side_effects.get(int(raw)) if known else None
    if effect is None or effect.status != "dead_letter" or effect.kind != "effect":
        raise DeadLetterNotFoundError(
            f"No dead letter {raw!r} in org {who.org_id}; GET /api/dead-letters lists them."
        )
    return effect if who.admin else effect.redacted()


@api("POST", "/api/dead-letters/retry", "Re-drive dead letters (same idempotency keys; a "
     "workflow's failed instance resumes at the node)", "dead letters", body=_IDS_BODY)  # fmt: skip
async def retry_dead_letters(request: Request, who: Principal) -> Any:
    ids = _field(await body_of(request), "ids", list)
    return {"retried": await who.client.dead_letters.retry(ids, actor=who.actor)}


@api("POST", "/api/dead-letters/drop", "Drop dead letters for good", "dead letters",
     body=_IDS_BODY)  # fmt: skip
async def drop_dead_letters(request: Request, who: Principal) -> Any:
    who.require_admin("drop dead letters")
    ids = _field(await body_of(request), "ids", list)
    return {"dropped": await who.client.dead_letters.drop(ids, actor=who.actor)}


# -- notifications -----------------------------------------------------------------------


def _bool_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw.lower() in ("", "0", "false", "no"):
        return False
    if raw.lower() in ("1", "true", "yes"):
        return True
    raise BadRequest(f"query parameter {name}={raw!r} is not true or false")


@api("GET", "/api/notifications", "The key's actor's in-app notifications, newest first "
     "(?unread=true: the unread ones only; ?limit=, 100 by default)",
     "notifications")  # fmt: skip
async def list_notifications(request: Request, who: Principal) -> Any:
    return await who.client.notifications.list(
        who.actor,
        unread_only=_bool_param(request, "unread"),
        limit=_int_param(request, "limit", 100, low=1, high=1000),
    )


@api("POST", "/api/notifications/{notification_id}/read", "Mark one of the key's actor's "
     "notifications read", "notifications", body_required=False)  # fmt: skip
async def read_notification(request: Request, who: Principal) -> Any:
    raw = request.path_params["notification_id"]
    if not (raw.isdigit() and len(raw) < 19):  # a bigint
        raise NotificationNotFoundError(
            f"No notification {raw!r} for {who.actor}; GET /api/notifications lists them."
        )
    await who.client.notifications.mark_read(who.actor, [int(raw)])
    return {"id": int(raw), "read": True}


@api("POST", "/api/notifications/read", "Mark the key's actor's notifications read: those in "
     "ids, or all of them without", "notifications", body=_IDS_BODY | {"required": []},
     body_required=False)  # fmt: skip
async def read_notifications(request: Request, who: Principal) -> Any:
    ids = _field(await body_of(request), "ids", list, required=False)
    return {"read": await who.client.notifications.mark_read(who.actor, ids)}
