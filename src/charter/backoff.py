"""Waiting out a lost database: exponential backoff with jitter, and a log line."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random

log = logging.getLogger("charter")


class Backoff:
    """0.1 s doubling to 5 s, each delay drawn from its upper half at random, so workers that
    lost PostgreSQL together (a restart) do not reconnect in lockstep."""

    def __init__(self, first: float = 0.1, cap: float = 5.0) -> None:
        self.first = first
        self.cap = cap
        self.attempts = 0

    def reset(self) -> None:
        self.attempts = 0

    def next_delay(self) -> float:
        ceiling = min(self.first * 2**self.attempts, self.cap)
        self.attempts += 1
        return random.uniform(ceiling / 2, ceiling)

    async def sleep(self, doing: str, exc: BaseException, stop: asyncio.Event | None) -> None:
        delay = self.next_delay()
        log.warning(
            "database unavailable while %s (%s); retrying in %.1fs", doing, short(exc), delay
        )
        if stop is None:
            await asyncio.sleep(delay)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)


def short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
