"""The documents engine looks once more shortly after a round that drained the outbox: of
the transactions that wrote events together only one sends the NOTIFY, and one that commits
just after the draining round must not wait for the poll."""

from __future__ import annotations

import asyncio
from typing import Any

from charter.worker.documents import DocumentsEngine


class _Rounds(DocumentsEngine):
    """An engine whose rounds report the work given, one entry per round."""

    def __init__(self, work: list[bool], **kwargs: Any) -> None:
        super().__init__(store=None, worker_id="w", **kwargs)
        self.work = work
        self.rounds = 0
        self.looked = asyncio.Event()

    async def step(self) -> bool:
        self.rounds += 1
        busy = self.work.pop(0) if self.work else False
        if not self.work:
            self.looked.set()
        return busy


def _run(engine: _Rounds, wait_for: float) -> tuple[int, bool]:
    async def go() -> tuple[int, bool]:
        stopping = asyncio.Event()
        loop = asyncio.create_task(engine._engine_loop(stopping))
        try:
            await asyncio.wait_for(engine.looked.wait(), wait_for)
            looked = True
        except TimeoutError:
            looked = False
        stopping.set()
        engine.wake.set()
        await loop
        return engine.rounds, looked

    return asyncio.run(go())


def test_a_busy_round_is_followed_by_a_look_and_a_second_look_before_the_poll():
    # busy, then idle (the drain), then the second look: three rounds, no NOTIFY, and the
    # poll is a minute away.
    engine = _Rounds([True, False, False], poll_interval=60.0)
    rounds, looked = _run(engine, wait_for=10.0)
    assert looked and rounds == 3


def test_an_idle_engine_waits_for_its_poll_or_a_notify():
    # Idle from the start: no second look, the next round waits for the poll.
    engine = _Rounds([False, False], poll_interval=60.0)
    rounds, looked = _run(engine, wait_for=0.5)
    assert not looked and rounds == 1
