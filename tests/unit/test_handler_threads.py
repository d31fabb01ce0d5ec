"""The threads sync handlers run in: every result reaches its own future, no more threads
than the limit run at once, the loop stays free while they run, and shutdown drops queued
work but lets running handlers finish."""

import asyncio
import threading
import time

import pytest

from charter.worker.threads import HandlerThreads


def test_each_result_and_exception_reaches_its_own_future():
    async def main() -> list[object]:
        threads = HandlerThreads(8)

        def make(n: int):
            def call() -> int:
                if n % 7 == 0:
                    raise ValueError(f"bad {n}")
                return n * n

            return call

        futures = [threads.submit(make(n)) for n in range(500)]
        results = await asyncio.gather(*futures, return_exceptions=True)
        assert threads.running == 0
        threads.shutdown()
        return results

    results = asyncio.run(main())
    for n, result in enumerate(results):
        if n % 7 == 0:
            assert isinstance(result, ValueError) and str(result) == f"bad {n}"
        else:
            assert result == n * n


def test_no_more_handlers_run_at_once_than_the_limit():
    running = 0
    most = 0
    lock = threading.Lock()

    def call() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with lock:
            running -= 1

    async def main() -> int:
        threads = HandlerThreads(3)
        futures = [threads.submit(call) for _ in range(12)]
        assert threads.running == 12  # queued ones count: their slots are taken
        await asyncio.gather(*futures)
        started = len(threads._threads)
        threads.shutdown()
        return started

    started = asyncio.run(main())
    assert most == 3
    assert started == 3


def test_threads_are_reused_rather_than_started_per_task():
    async def main() -> int:
        threads = HandlerThreads(100)
        for _ in range(20):  # one at a time: the one thread there is idle each time
            await threads.submit(lambda: None)
        started = len(threads._threads)
        threads.shutdown()
        return started

    assert asyncio.run(main()) == 1


def test_the_event_loop_runs_while_a_handler_blocks():
    release = threading.Event()

    async def main() -> bool:
        threads = HandlerThreads(2)
        blocked = threads.submit(release.wait)
        ticks = 0
        for _ in range(5):
            await asyncio.sleep(0.001)
            ticks += 1
        assert not blocked.done() and ticks == 5
        release.set()
        result = await blocked
        threads.shutdown()
        return bool(result)

    assert asyncio.run(main()) is True


def test_shutdown_drops_queued_work_and_lets_running_handlers_finish():
    release = threading.Event()
    finished = []

    def slow() -> str:
        release.wait(5)
        finished.append("slow")
        return "done"

    async def main() -> None:
        threads = HandlerThreads(1)
        running = threads.submit(slow)
        queued = threads.submit(lambda: finished.append("queued"))
        await asyncio.sleep(0.01)
        threads.shutdown()
        await asyncio.sleep(0.01)
        assert queued.cancelled()
        assert threads.running == 1  # the running handler still holds its thread
        release.set()
        assert await running == "done"
        assert threads.running == 0
        with pytest.raises(RuntimeError, match="shut down"):
            threads.submit(lambda: None)

    asyncio.run(main())
    assert finished == ["slow"]
