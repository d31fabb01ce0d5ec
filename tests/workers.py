"""Running a real Worker in a background thread for a test."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from charter import Flow
from charter.db.connection import DatabaseTarget
from charter.worker.runner import Worker, WorkerSettings
from tests.engine import install


@contextmanager
def running_worker(
    db_url: str,
    *flows: Flow,
    install_flows: bool = True,
    actions: dict[str, Any] | None = None,
    **settings: Any,
) -> Iterator[Worker]:
    """A worker serving ``flows`` in a thread; ``install_flows=False`` when the test has put
    the versions it wants in the database itself."""
    if install_flows:
        with psycopg.connect(db_url, autocommit=True) as conn:
            for flow in flows:
                install(conn, flow)
    options = {"poll_interval": 0.2, **settings}
    worker = Worker(
        list(flows), DatabaseTarget(db_url, "test"), WorkerSettings(**options), actions=actions
    )
    loop = asyncio.new_event_loop()
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            loop.run_until_complete(worker.serve())
        except BaseException as exc:  # surfaced to the test below
            errors.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    while not worker.ready.wait(0.05) and thread.is_alive():
        pass
    try:
        yield worker
    finally:
        loop.call_soon_threadsafe(worker.stop)
        thread.join(60)
        loop.close()
    assert not errors, f"the worker crashed: {errors[0]!r}"
