"""What a step handler can raise to steer its own retries.

>>> from charter import NonRetryable
>>> def charge(run: dict) -> dict:                                   # doctest: +SKIP
...     if run["card"] == "declined":
...         raise NonRetryable("the card was declined; retrying will not help")

Any exception with a true ``permanent`` attribute works the same, so a library's own
exception class can opt in without depending on charter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class NonRetryable(Exception):
    """Fails the step at once, without using its remaining attempts."""

    permanent = True


class Reschedule(BaseException):
    """Resume this task later instead of finishing now: return it (or raise it) from a
    handler, or call ``ctx.sleep_until(ts)``. The attempt is recorded as evidence
    (``rescheduled``) and does not count against ``max_attempts``; the task is claimed again
    at ``at``, or ``after`` seconds (a number or a ``timedelta``) from now.

    It derives from BaseException so that a handler's ``except Exception`` cannot swallow it.
    """

    def __init__(self, after: float | timedelta | None = None, at: datetime | None = None) -> None:
        if (after is None) == (at is None):
            raise ValueError(
                "Reschedule takes after= (seconds or a timedelta) or at= (a datetime), one of them"
            )
        if at is not None and (not isinstance(at, datetime) or at.tzinfo is None):
            raise ValueError(f"Reschedule at= needs a timezone-aware datetime, got {at!r}")
        if after is not None:
            seconds = after.total_seconds() if isinstance(after, timedelta) else after
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not 0 <= seconds <= 31_536_000
            ):
                raise ValueError(f"Reschedule after= needs 0 to 31536000 seconds, got {after!r}")
        super().__init__(after, at)
        self.after = after
        self.at = at

    def resume_at(self) -> datetime:
        if self.at is not None:
            return self.at
        assert self.after is not None
        delta = self.after if isinstance(self.after, timedelta) else timedelta(seconds=self.after)
        return datetime.now(UTC) + delta
