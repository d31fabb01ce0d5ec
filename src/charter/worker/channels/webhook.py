"""Webhooks with httpx: each request is signed and carries the effect's idempotency key.

* ``Idempotency-Key`` — the same on every attempt of one effect, so a receiver that honours
  it applies the effect once even when a worker died after sending;
* ``X-Charter-Signature: sha256=<hex>`` — HMAC-SHA256 of the exact body bytes with the org's
  webhook secret (``client.side_effects.webhook_secret()``), for the receiver to verify;
* ``X-Charter-Effect`` and ``X-Charter-Attempt``.

Network errors, timeouts, 5xx and 429 (honouring ``Retry-After``) are retried; any other
4xx is final, and so is what can never pass: a destination the policy refuses
(``WEBHOOK_DESTINATION_DENIED``, :mod:`charter.worker.channels.destinations`) or a header
value with a line break (templated from a document's data). The response's status, a few
headers and the body cut to 4 KB are the evidence (the body is shown to admins only).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from charter import settings
from charter.canonical import canonical_json
from charter.worker.channels import Outcome, delivered, refused
from charter.worker.channels.destinations import (
    DENIED_CODE,
    CheckedTransport,
    DestinationDenied,
    DestinationPolicy,
)

SIGNATURE_HEADER = "X-Charter-Signature"
_KEPT_HEADERS = ("content-type", "retry-after", "location", "x-request-id")
RESPONSE_BODY_LIMIT = 4096  # bytes of a receiver's response body kept as evidence


def signature(secret: str, body: bytes) -> str:
    """The value of the signature header for ``body``: how a receiver checks a webhook."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookSender:
    def __init__(
        self, timeout_seconds: float | None = None, policy: DestinationPolicy | None = None
    ) -> None:
        self.timeout_seconds = (
            settings.webhook_timeout() if timeout_seconds is None else timeout_seconds
        )
        self.policy = DestinationPolicy() if policy is None else policy  # CHARTER_WEBHOOK_ALLOW
        self._client: httpx.AsyncClient | None = None

    async def send(
        self, request: dict[str, Any], *, key: str, secret: str, effect_id: int, attempt: int
    ) -> Outcome:
        body = canonical_json(request.get("body") or {}).encode()
        headers = {
            **{str(k): str(v) for k, v in (request.get("headers") or {}).items()},
            "Content-Type": "application/json",
            "Idempotency-Key": key,
            SIGNATURE_HEADER: signature(secret, body),
            "X-Charter-Effect": str(effect_id),
            "X-Charter-Attempt": str(attempt),
        }
        url = request.get("url", "")
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                return refused(
                    f"header {name!r} of the webhook to {url} has a line break in its value "
                    f"{value!r}: a header value is one line (check the data it is made from)",
                    retry=False,
                )
        try:
            self.policy.check_spelling(url)
        except DestinationDenied as exc:
            return refused(str(exc), retry=False, code=DENIED_CODE)
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout_seconds, transport=CheckedTransport(self.policy),
                trust_env=False,
            )  # fmt: skip
        try:
            response = await self._client.request(
                request.get("method", "POST"), url, content=body, headers=headers
            )
        except DestinationDenied as exc:  # the resolved address, checked at connect time
            return refused(str(exc), retry=False, code=DENIED_CODE)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:  # never passes later
            return refused(f"{type(exc).__name__}: {exc} ({url})", retry=False)
        except httpx.HTTPError as exc:  # refused, reset, timed out …
            return refused(f"{type(exc).__name__}: {exc} ({url})", retry=True)
        evidence = {
            "status": response.status_code,
            "headers": {k: v for k, v in response.headers.items() if k in _KEPT_HEADERS},
            "body": response.content[:RESPONSE_BODY_LIMIT].decode(
                response.encoding or "utf-8", errors="replace"
            ),
        }
        if response.is_success:
            return delivered(evidence)
        return refused(
            f"HTTP {response.status_code} from {url}",
            retry=response.status_code >= 500 or response.status_code == 429,
            retry_after=retry_after(response.headers.get("retry-after")),
            response=evidence,
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def retry_after(value: str | None) -> float | None:
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
