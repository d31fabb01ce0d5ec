"""The claim's limits on a flow or a step, checked at definition time.

``priority``: 0-1000, higher first; a task of priority N is claimed as if it had been ready
N minutes earlier, so a lower one waits at most the gap. ``concurrency``: at most
``limit`` tasks with the same key run at once across all workers (``key`` left out: of the
flow, or the step, as a whole). ``rate_limit``: a token bucket per key shared by all
workers, ``per_second`` tokens a second up to ``burst``.

A key is a path into the run input (``"run.customer_id"``), a template
(``"acct:{run.account_id}"``, on a step also ``{dependency.field}``) or a fixed name
(``"stripe"``: every task that names it shares it).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from charter.errors import FlowDefinitionError
from charter.payloads import shown

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
MAX_KEY = 200
MAX_LIMIT = 100_000


def claim_limits(
    where: str,
    *,
    priority: Any = None,
    concurrency: Any = None,
    rate_limit: Any = None,
    names: Collection[str] = ("run",),
) -> dict[str, Any]:
    """The limits as the shape spells them, only those that are set."""
    limits: dict[str, Any] = {}
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 1000:
            raise _invalid(
                f"{where}: priority={shown(priority)} is out of range; use a whole "
                "number from 0 to 1000 (higher runs first)."
            )
        limits["priority"] = priority
    if concurrency is not None:
        limits["concurrency"] = _concurrency(where, concurrency, names)
    if rate_limit is not None:
        limits["rateLimit"] = _rate_limit(where, rate_limit, names)
    return limits


def check_template(where: str, what: str, template: Any, names: Collection[str]) -> str:
    """A key or time template whose placeholders name the run input or a dependency."""
    if not isinstance(template, str) or not 1 <= len(template) <= 500:
        raise _invalid(
            f"{where}: {what} must be a string of 1 to 500 characters, not {shown(template)}."
        )
    for placeholder in PLACEHOLDER.findall(template):
        head = placeholder.strip().split(".")[0]
        if head not in names:
            known = ", ".join(sorted(names))
            raise _invalid(
                f"{where}: {what} {template!r} names {{{placeholder}}}, but {head!r} is not "
                f"available here; a placeholder starts with one of: {known}."
            )
    return template


def _concurrency(where: str, value: Any, names: Collection[str]) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"key", "limit"} or "limit" not in value:
        raise _invalid(
            f"{where}: concurrency= takes {{'key': 'run.customer_id', 'limit': 2}} "
            f"(key optional), not {shown(value)}."
        )
    limit = value["limit"]
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise _invalid(
            f"{where}: concurrency limit {shown(limit)} is out of range; use a "
            f"whole number from 1 to {MAX_LIMIT}."
        )
    result: dict[str, Any] = {"limit": limit}
    if value.get("key") is not None:
        key = _key(where, "concurrency", value["key"], names)
        if "{" not in key and not (key == "run" or key.startswith("run.")):
            raise _invalid(
                f"{where}: the concurrency key {key!r} names no field, so every task would "
                f"share it; write 'run.{key}' for a field of the run input (or a template "
                "like 'acct:{run.account_id}'), or leave key out for one limit for all."
            )
        result["key"] = key
    return result


def _rate_limit(where: str, value: Any, names: Collection[str]) -> dict[str, Any]:
    if (
        not isinstance(value, dict)
        or set(value) - {"key", "per_second", "burst"}
        or not {"key", "per_second"} <= set(value)
    ):
        raise _invalid(
            f"{where}: rate_limit= takes {{'key': 'stripe', 'per_second': 5, "
            f"'burst': 10}} (burst optional), not {shown(value)}."
        )
    rate = value["per_second"]
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= MAX_LIMIT:
        raise _invalid(
            f"{where}: rate_limit per_second={shown(rate)} is out of range; use a "
            f"number above 0 and at most {MAX_LIMIT}."
        )
    result: dict[str, Any] = {
        "key": _key(where, "rate_limit", value["key"], names),
        "perSecond": rate,
    }
    if value.get("burst") is not None:
        burst = value["burst"]
        if isinstance(burst, bool) or not isinstance(burst, int) or not 1 <= burst <= MAX_LIMIT:
            raise _invalid(
                f"{where}: rate_limit burst={shown(burst)} is out of range; use a "
                f"whole number from 1 to {MAX_LIMIT}."
            )
        result["burst"] = burst
    return result


def _key(where: str, what: str, key: Any, names: Collection[str]) -> str:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY:
        raise _invalid(
            f"{where}: the {what} key must be a string of 1 to {MAX_KEY} "
            f"characters, not {shown(key)}."
        )
    if "{" not in key and (key == "run" or key.startswith("run.")):
        return key
    return check_template(where, f"the {what} key", key, names)


def _invalid(message: str) -> FlowDefinitionError:
    return FlowDefinitionError(message, code="FLOW_OPTION_INVALID")
