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
        blocked = threads.submit(lambda: release.wait(5))
        # The loop goes on meanwhile: a handler run on the loop itself would not be done
        # with its wait before these sleeps, and would have returned False after 5 s.
        await asyncio.sleep(0.05)
        assert not blocked.done()
        release.set()
        result = await blocked
        threads.shutdown()
        return bool(result)

    assert asyncio.run(main()) is True


def test_a_cancelled_future_is_not_run_and_the_others_still_arrive():
    release = threading.Event()
    ran = []

    async def main() -> list[object]:
        threads = HandlerThreads(1)
        first = threads.submit(lambda: release.wait(5))
        skipped = threads.submit(lambda: ran.append("skipped"))
        last = threads.submit(lambda: "last")
        skipped.cancel()
        release.set()
        results = [await first, await last]
        assert threads.running == 0
        threads.shutdown()
        return results

    assert asyncio.run(main()) == [True, "last"]
    assert ran == []


def test_stop_iteration_from_a_handler_fails_its_future_instead_of_the_delivery():
    async def main() -> list[object]:
        threads = HandlerThreads(1)

        def stops() -> None:
            raise StopIteration("done")

        failed = threads.submit(stops)
        fine = threads.submit(lambda: "fine")
        results = await asyncio.gather(failed, fine, return_exceptions=True)
        threads.shutdown()
        return list(results)

    failed, fine = asyncio.run(main())
    assert isinstance(failed, RuntimeError) and "StopIteration" in str(failed)
    assert fine == "fine"


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        HandlerThreads(0)


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
