"""Test clock operations: move an org's clock in development."""

from __future__ import annotations

from datetime import datetime, timedelta

from charter.db.store import Call, Operation
from charter.errors import ArgumentError, ProductionClockError


def advance_clock(org_id: str, by: timedelta | float, development: bool) -> Operation[datetime]:
    """Moves the org's test clock forward; other orgs' time does not move."""
    if not development:
        raise ProductionClockError(
            "The test clock moves only in development mode; this client talks to a production "
            "database. Set CHARTER_MODE=development for tests and demos."
        )
    seconds = by.total_seconds() if isinstance(by, timedelta) else by
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ArgumentError(f"the test clock moves forward by seconds >= 0, not {by!r}")
    rows = yield Call(
        "advance_test_clock",
        {"org_id": org_id, "by": f"{float(seconds)} seconds"},
        list,
        retry_safe=False,
    )
    return rows[0][1]  # type: ignore[no-any-return]


def reset_clock(org_id: str, development: bool) -> Operation[datetime]:
    if not development:
        raise ProductionClockError(
            "The test clock moves only in development mode. Set CHARTER_MODE=development."
        )
    rows = yield Call("reset_test_clock", {"org_id": org_id}, list)
    return rows[0][1]  # type: ignore[no-any-return]
