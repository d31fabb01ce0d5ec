"""Side effect operations: webhooks, emails and tasks queued in the outbox."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from charter.db.store import Call, Operation, first_json, first_value
from charter.errors import ArgumentError
from charter.ops.arguments import text_argument, whole_number
from charter.ops.run_model import timestamp
from charter.payloads import json_text
from charter.vocabulary import SideEffectChannel

TASK_TYPES = tuple(sorted(set(SideEffectChannel) - {SideEffectChannel.NOTIFICATION}))
"""The channels a seed 003 task sends on (a notification is an effect only)."""


@dataclass(frozen=True)
class SideEffect:
    """One row of the outbox: an effect (webhook, notification) or a seed 003 task."""

    id: int
    kind: str  # effect | task
    channel: str  # webhook | email | sms | in_app | db_function
    target: str  # the URL, the notification's `to`, or the function
    status: str  # pending | processing | failed | completed | dead_letter | cancelled
    attempts: int
    max_attempts: int
    error: str | None
    idempotency_key: str
    run_id: str | None
    node: str | None
    request: dict[str, Any]
    response: dict[str, Any] | None
    created_at: datetime | None
    completed_at: datetime | None
    next_attempt_at: datetime | None
    interventions: list[dict[str, Any]]  # re-driven or dropped: by whom, when, last error

    @property
    def last_error(self) -> str | None:
        return self.error

    def redacted(self) -> SideEffect:
        """What anyone but an admin sees: request headers that carry secrets masked, and no
        receiver's response body (only its status and headers)."""
        request = dict(self.request)
        if isinstance(request.get("headers"), dict):
            request["headers"] = redact_headers(request["headers"])
        response = self.response
        if isinstance(response, dict) and "body" in response:
            response = {k: v for k, v in response.items() if k != "body"}
        return dataclasses.replace(self, request=request, response=response)


REDACTED = "[redacted]"


_SECRET_HEADER = re.compile(
    r"^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|key", re.IGNORECASE
)


def redact_headers(headers: dict[str, Any]) -> dict[str, Any]:
    """Headers with the values of those that carry secrets (``Authorization``, ``Cookie``,
    any name with ``token``, ``secret`` or ``key`` in it) replaced by ``[redacted]``."""
    return {k: REDACTED if _SECRET_HEADER.search(str(k)) else v for k, v in headers.items()}


EVENT_TIMESTAMP_HEADER = "X-Charter-Timestamp"


EVENT_TOLERANCE_SECONDS = 300


def event_signature(secret: str, timestamp: int | str, event_key: str, body: bytes) -> str:
    """The ``X-Charter-Signature`` of an inbound event (``POST /api/events/{key}``):
    ``sha256=`` and the hex HMAC-SHA256, with the org's webhook secret, of
    ``"<X-Charter-Timestamp>.<event key>."`` followed by the exact body bytes. A webhook
    charter sent (whose signature covers its body alone) never passes as an event."""
    message = f"{timestamp}.{event_key}.".encode() + body
    return "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def side_effect(data: dict[str, Any]) -> SideEffect:
    return SideEffect(
        id=data["id"],
        kind=data["kind"],
        channel=data["channel"],
        target=data.get("target") or "",
        status=data["status"],
        attempts=data["attempts"],
        max_attempts=data["maxAttempts"],
        error=data.get("error"),
        idempotency_key=data["idempotencyKey"],
        run_id=data.get("runId"),
        node=data.get("node"),
        request=data.get("request") or {},
        response=data.get("response"),
        created_at=timestamp(data.get("createdAt")),
        completed_at=timestamp(data.get("completedAt")),
        next_attempt_at=timestamp(data.get("nextAttemptAt")),
        interventions=data.get("interventions") or [],
    )


@dataclass(frozen=True)
class QueuedWebhook:
    id: int
    status: str  # queued | duplicate (the idempotency key was used before)
    idempotency_key: str


@dataclass(frozen=True)
class EmailSend:
    """Seed 003's email process for one send, from its facts."""

    id: int
    to: str
    subject: str
    state: str  # sending | succeeded | failed | gave_up
    max_attempts: int
    scheduled: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    succeeded: dict[str, Any] | None


def _moment(value: Any, name: str) -> datetime | None:
    """None (now) or a datetime, or ArgumentError naming it."""
    if value is not None and not isinstance(value, datetime):
        raise ArgumentError(
            f"{name} must be a datetime (or None for now), not {type(value).__name__}."
        )
    return value


def _span(value: Any) -> timedelta:
    if not isinstance(value, timedelta):
        raise ArgumentError(f"recheck_after must be a timedelta, not {type(value).__name__}.")
    return value


def enqueue_webhook(
    org_id: str,
    url: str,
    body: Any,
    *,
    method: str,
    headers: dict[str, str] | None,
    idempotency_key: str | None,
    max_attempts: int,
) -> Operation[QueuedWebhook]:
    params = {
        "org_id": org_id,
        "url": text_argument(url, "url"),
        "body": json_text({} if body is None else body, "webhook body"),
        "method": text_argument(method, "method"),
        "headers": json_text(headers or {}, "webhook headers"),
        "idempotency_key": (
            None if idempotency_key is None else text_argument(idempotency_key, "idempotency_key")
        ),
        "max_attempts": whole_number(max_attempts, "max_attempts"),
    }
    data = yield Call("enqueue_webhook", params, first_json, retry_safe=idempotency_key is not None)
    return QueuedWebhook(data["id"], data["status"], data["idempotencyKey"])


def get_side_effect(org_id: str, effect_id: int) -> Operation[SideEffect | None]:
    data = yield Call(
        "get_side_effect",
        {"org_id": org_id, "id": whole_number(effect_id, "effect_id")},
        first_json,
    )
    return side_effect(data) if data else None


def enqueue_task(
    org_id: str, task_type: str, payload: dict[str, Any], at: datetime | None
) -> Operation[int]:
    params = {
        "org_id": org_id,
        "task_type": text_argument(task_type, "task_type"),
        "payload": json_text(payload, "task payload"),
        "scheduled_at": _moment(at, "at"),
    }
    return int((yield Call("enqueue_task", params, first_value, retry_safe=False)))


def send_email(
    org_id: str,
    to: str,
    subject: str,
    body: str,
    *,
    max_attempts: int,
    at: datetime | None,
    recheck_after: timedelta,
) -> Operation[int]:
    params = {
        "org_id": org_id,
        "to": text_argument(to, "to"),
        "subject": text_argument(subject, "subject"),
        "body": text_argument(body, "body"),
        "max_attempts": whole_number(max_attempts, "max_attempts"),
        "scheduled_at": _moment(at, "at"),
        "recheck_after": _span(recheck_after),
    }
    return int((yield Call("send_email", params, first_value, retry_safe=False)))


def send_email_status(org_id: str, send_id: int) -> Operation[EmailSend | None]:
    data = yield Call(
        "send_email_status", {"org_id": org_id, "id": whole_number(send_id, "send_id")}, first_json
    )
    if not data:
        return None
    return EmailSend(
        id=data["id"],
        to=data["to"],
        subject=data["subject"],
        state=data["state"],
        max_attempts=data["maxAttempts"],
        scheduled=data["scheduled"],
        failures=data["failures"],
        succeeded=data.get("succeeded"),
    )


def webhook_secret(org_id: str) -> Operation[str]:
    return str((yield Call("webhook_secret", {"org_id": org_id}, first_value)))
