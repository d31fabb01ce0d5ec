"""Webhook delivery inside ``charter worker``: the side-effects outbox's webhooks, sent with
httpx (seed 003 channels, WF-10).

Each claimed effect is POSTed (or PUT) once per attempt with:

* ``Idempotency-Key`` — the effect's key, the same on every attempt, so a receiver that
  honours it applies the effect once even when a worker died after sending;
* ``X-Charter-Signature: sha256=<hex>`` — HMAC-SHA256 of the exact body bytes with the org's
  webhook secret (``client.side_effects.webhook_secret()``), for the receiver to verify;
* ``X-Charter-Effect`` and ``X-Charter-Attempt``.

Network errors, timeouts, 5xx and 429 (honouring ``Retry-After``) are retried with backoff
and jitter; any other 4xx is final (dead letter). The response's status, a few headers and
the body cut to 2,000 characters go into the evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from psycopg.types.json import Jsonb

from charter.backoff import Backoff
from charter.canonical import canonical_json
from charter.store import AsyncStore, Call, first_value, json_rows
from charter.worker.completion import RETRYABLE_DB_ERRORS

log = logging.getLogger("charter.worker")

SIGNATURE_HEADER = "X-Charter-Signature"
_KEPT_HEADERS = ("content-type", "retry-after", "location", "x-request-id")
_BODY_LIMIT = 2000


def signature(secret: str, body: bytes) -> str:
    """The value of the signature header for ``body``: how a receiver checks a webhook."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class WebhookDelivery:
    store: AsyncStore
    worker_id: str
    lease_seconds: int = 30
    timeout_seconds: float = 10.0
    batch_size: int = 20
    delivered: int = 0
    _client: httpx.AsyncClient | None = field(default=None, repr=False)

    async def run(self, stopping: asyncio.Event, wake: asyncio.Event, poll_interval: float) -> None:
        backoff = Backoff()
        while not stopping.is_set():
            try:
                sent = await self.step()
            except RETRYABLE_DB_ERRORS as exc:
                await backoff.sleep("delivering webhooks", exc, stopping)
                continue
            except Exception:  # never stop delivering silently
                log.exception("webhook delivery failed; trying again")
                await backoff.sleep("delivering webhooks", RuntimeError("webhooks"), stopping)
                continue
            backoff.reset()
            if not sent:
                # The engine's wake-up (NOTIFY charter_events) also means new effects may wait.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), poll_interval)

    async def step(self) -> int:
        """Claim due webhooks and send them; returns how many were attempted."""
        effects = await self.store.execute(
            Call(
                "claim_side_effects",
                {
                    "worker_id": self.worker_id,
                    "effect_types": ["webhook"],
                    "limit": self.batch_size,
                    "lease_seconds": self.lease_seconds,
                },
                json_rows,
            )
        )
        if effects:
            await asyncio.gather(*(self._deliver(effect) for effect in effects))
        return len(effects)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def _deliver(self, effect: dict[str, Any]) -> None:
        request = effect["request"]
        body = canonical_json(request.get("body") or {}).encode()
        headers = {
            **{str(k): str(v) for k, v in (request.get("headers") or {}).items()},
            "Content-Type": "application/json",
            "Idempotency-Key": effect["idempotencyKey"],
            SIGNATURE_HEADER: signature(effect["secret"], body),
            "X-Charter-Effect": str(effect["id"]),
            "X-Charter-Attempt": str(effect["attempt"]),
        }
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout_seconds)
        try:
            response = await self._client.request(
                request.get("method", "POST"), request["url"], content=body, headers=headers
            )
        except httpx.HTTPError as exc:  # refused, reset, timed out, bad URL …
            outcome: dict[str, Any] = {
                "ok": False,
                "retry": not isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol),
                "error": f"{type(exc).__name__}: {exc}"[:_BODY_LIMIT],
            }
        else:
            evidence = {
                "status": response.status_code,
                "headers": {k: v for k, v in response.headers.items() if k in _KEPT_HEADERS},
                "body": response.text[:_BODY_LIMIT],
            }
            if response.is_success:
                outcome = {"ok": True, "response": evidence}
            else:
                retry = response.status_code >= 500 or response.status_code == 429
                outcome = {
                    "ok": False,
                    "retry": retry,
                    "retryAfter": _retry_after(response.headers.get("retry-after")),
                    "error": f"HTTP {response.status_code} from {request['url']}",
                    "response": evidence,
                }
        result = await self.store.execute(
            Call(
                "finish_side_effect",
                {"effect_id": effect["id"], "worker_id": self.worker_id, "outcome": Jsonb(outcome)},
                first_value,
                retry_safe=True,  # fenced by the worker id: a resend finds it answered
            )
        )
        if result == "delivered":
            self.delivered += 1
        elif result in ("retry", "dead_letter"):
            log.warning(
                "webhook %s to %s (attempt %d): %s; %s",
                effect["id"],
                request["url"],
                effect["attempt"],
                outcome.get("error"),
                "retried later" if result == "retry" else "dead-lettered",
                extra={"worker": self.worker_id, "run_id": effect.get("runId")},
            )


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: a number of seconds, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())
