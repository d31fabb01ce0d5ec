"""How the worker reaches the outside world: one module per channel (webhook, email, SMS).

Every send returns an *outcome*, the dict ``finish_side_effect`` records::

    {"ok": True, "response": {...}}
    {"ok": False, "retry": bool, "retryAfter": seconds | None, "error": "...", "response": {...}}

``retry`` is true for what may pass on a later attempt (network errors, timeouts, 5xx, 429,
SMTP 4xx) and false for what will not (other 4xx, SMTP 5xx, a bad address, a webhook
destination the policy refuses: ``"code": "WEBHOOK_DESTINATION_DENIED"``).
"""

from __future__ import annotations

from typing import Any

Outcome = dict[str, Any]

EVIDENCE_LIMIT = 2000  # characters of a response body or error kept as evidence


def delivered(response: dict[str, Any]) -> Outcome:
    return {"ok": True, "response": response}


def refused(
    error: str,
    *,
    retry: bool,
    retry_after: float | None = None,
    response: dict[str, Any] | None = None,
    code: str | None = None,
) -> Outcome:
    outcome: Outcome = {"ok": False, "retry": retry, "error": error[:EVIDENCE_LIMIT]}
    if code is not None:
        outcome["code"] = code
    if retry_after is not None:
        outcome["retryAfter"] = retry_after
    if response is not None:
        outcome["response"] = response
    return outcome
