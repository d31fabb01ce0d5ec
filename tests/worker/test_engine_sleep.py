"""When the documents engine looks for work again. Writers of events notify only while an
engine sleeps holding the 'engine' lock (charter._wake_engine), so an engine that found
nothing asks to sleep first, looks once more when it may, looks again soon while writers
that will not notify are open, and lets go of the lock when it wakes."""

from __future__ import annotations

import asyncio
from typing import Any

from charter.worker.documents import DocumentsEngine
from charter.worker.engine_sleep import SleepState


class _Sleep:
    """What charter.engine_sleeps answers, in turn; the lock itself is tested in
    tests/documents/test_wake_engine.py."""

    def __init__(self, answers: list[SleepState]) -> None:
        self.answers = answers
        self.asleep = False
        self.woken = 0
        self.closed = False

    async def try_sleep(self) -> SleepState:
        state = self.answers.pop(0) if self.answers else "watched"
        self.asleep = state == "asleep"
        return state

    async def woke(self) -> None:
        if self.asleep:
            self.asleep = False
            self.woken += 1

    async def close(self) -> None:
        self.closed = True


class _Rounds(DocumentsEngine):
    """An engine whose rounds report the work given, one entry per round."""

    def __init__(self, work: list[bool], answers: list[SleepState], **kwargs: Any) -> None:
        self.fake_sleep = _Sleep(answers)
        super().__init__(store=None, worker_id="w", sleep=self.fake_sleep, **kwargs)
        self.work = work
        self.rounds = 0
        self.looked = asyncio.Event()

    async def step(self) -> bool:
        self.rounds += 1
        busy = self.work.pop(0) if self.work else False
        if not self.work:
            self.looked.set()
        return busy


def _run(engine: _Rounds, wait_for: float, notify_after: bool = False) -> tuple[int, bool]:
    async def go() -> tuple[int, bool]:
        stopping = asyncio.Event()
        loop = asyncio.create_task(engine._engine_loop(stopping))
        try:
            await asyncio.wait_for(engine.looked.wait(), wait_for)
            looked = True
        except TimeoutError:
            looked = False
        if notify_after:
            await asyncio.sleep(0.05)
            engine.notified()
            await asyncio.sleep(0.05)
        stopping.set()
        engine.wake.set()
        await loop
        return engine.rounds, looked

    return asyncio.run(go())


def test_an_engine_that_may_sleep_looks_once_more_then_sleeps_until_the_poll():
    # busy, idle (asks to sleep: granted), the look after taking the lock, then asleep:
    # three rounds, and the poll is a minute away.
    engine = _Rounds([True, False, False, False], ["asleep"], poll_interval=60.0)
    rounds, looked = _run(engine, wait_for=0.5)
    assert not looked and rounds == 3
    assert engine.fake_sleep.closed  # stopping closes its connection, letting go of the lock


def test_a_notify_wakes_a_sleeping_engine_and_it_lets_go_of_the_lock():
    engine = _Rounds([False, False, True, False], ["asleep"], poll_interval=60.0)
    rounds, _ = _run(engine, wait_for=0.3, notify_after=True)
    assert rounds >= 3
    assert engine.fake_sleep.woken >= 1


def test_open_writers_that_will_not_notify_bring_a_look_soon_not_a_poll_later():
    # idle, writers open (look again in 20 ms), then idle again and allowed to sleep.
    engine = _Rounds([False, False, False], ["writing", "asleep"], poll_interval=60.0)
    rounds, looked = _run(engine, wait_for=5.0)
    assert looked and rounds == 3


def test_an_engine_watched_by_another_sleeper_waits_for_the_poll_or_a_notify():
    engine = _Rounds([False, False], ["watched"], poll_interval=60.0)
    rounds, looked = _run(engine, wait_for=0.5)
    assert not looked and rounds == 1
