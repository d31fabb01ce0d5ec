# Generated from test_clock_async.py by tools/async_to_sync.py; do not edit.
# Edit test_clock_async.py and run: python tools/async_to_sync.py
"""The test clock face of the client."""

from __future__ import annotations

from datetime import datetime, timedelta

from charter.client.test_clock_async import AsyncTestClock as AsyncTestClock
from charter.db.store import Store
from charter.ops import test_clock as test_clock_ops


class TestClock:
    """The org's notion of now for timers, timeouts, escalations and schedules, moved forward
    in tests and demos (development mode only): a 72-hour timeout is testable in a second.
    Each org has its own clock: moving this one moves no other org's time."""

    __test__ = False

    def __init__(self, store: Store, development: bool, org_id: str) -> None:
        self._store, self._development, self._org = (store, development, org_id)

    def advance(self, by: timedelta | float) -> datetime:
        """Move the org's now forward by ``by`` (a timedelta or seconds); returns it."""
        return self._store.perform(test_clock_ops.advance_clock(self._org, by, self._development))

    def reset(self) -> datetime:
        return self._store.perform(test_clock_ops.reset_clock(self._org, self._development))
