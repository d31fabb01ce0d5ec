"""Real ``charter worker`` processes for the flow tests, serving a module written to disk."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.helpers import charter_env


def write_module(directory: Path, name: str, source: str) -> Path:
    (directory / f"{name}.py").write_text(textwrap.dedent(source))
    return directory


def deploy(project: Path, module: str, db_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "charter", "deploy", module],
        cwd=project,
        env=charter_env(CHARTER_DATABASE_URL=db_url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def start_worker(
    project: Path, module: str, db_url: str, *extra: str, **env: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", module, "--poll-interval", "0.1", *extra],
        cwd=project,
        env=charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="production", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@contextmanager
def workers(
    project: Path, module: str, db_url: str, count: int, *extra: str, **env: str
) -> Iterator[list[subprocess.Popen[str]]]:
    """``count`` worker processes, stopped with SIGTERM (and their output shown if one
    crashed) when the block ends."""
    procs = [start_worker(project, module, db_url, *extra, **env) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_until_serving(db_url: str, count: int, timeout: float = 60) -> None:
    """Block until ``count`` workers are registered and alive, so work started after this
    is shared out among them."""
    import time

    import psycopg

    deadline = time.monotonic() + timeout
    with psycopg.connect(db_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            live = conn.execute(
                "SELECT count(*) FROM charter.workers WHERE stopped_at IS NULL"
            ).fetchone()[0]
            if live >= count:
                return
            time.sleep(0.1)
    raise AssertionError(f"fewer than {count} workers registered within {timeout}s")
