"""Real worker processes killed with SIGKILL, stopped with SIGTERM, several at once, and a
PostgreSQL restart under them: every run completes and every completion is recorded once."""

import json
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from charter.db import embedded
from tests.integration.helpers import charter_env

pytestmark = pytest.mark.slow

FLOWS = """
import json, os, time
from charter import Flow

LOG = os.environ.get("CHARTER_TEST_LOG", os.devnull)

def record(event, ctx):
    with open(LOG, "a") as log:
        log.write(json.dumps({"event": event, "run": ctx.run_id, "step": ctx.step,
                              "index": ctx.task_index, "attempt": ctx.attempt,
                              "pid": os.getpid(), "t": time.time()}) + "\\n")

flow = Flow("crashy", max_attempts=20, base_delay=0, timeout=30)

@flow.step
def split(run: dict, ctx) -> list[int]:
    record("start", ctx)
    time.sleep(float(os.environ.get("CHARTER_TEST_SLEEP", "0.05")))
    record("end", ctx)
    return list(range(run["n"]))

@flow.map(over=split)
def work(item: int, ctx) -> int:
    record("start", ctx)
    time.sleep(float(os.environ.get("CHARTER_TEST_SLEEP", "0.05")))
    record("end", ctx)
    return item * item

@flow.step(depends_on=[split])
def size(split: list[int], ctx) -> int:
    record("start", ctx)
    record("end", ctx)
    return len(split)

@flow.step(depends_on=[work, size])
def join(work: list[int], size: int, ctx) -> dict:
    record("start", ctx)
    time.sleep(float(os.environ.get("CHARTER_TEST_SLEEP", "0.05")))
    record("end", ctx)
    return {"sum": sum(work), "size": size}
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "crashflows.py").write_text(textwrap.dedent(FLOWS))
    return tmp_path


def _worker(project, db_url, log, *extra, sleep="0.05"):
    env = charter_env(
        CHARTER_DATABASE_URL=db_url,
        CHARTER_TEST_LOG=str(log),
        CHARTER_TEST_SLEEP=sleep,
        CHARTER_MODE="production",
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "charter",
            "worker",
            "crashflows",
            "--lease-seconds",
            "2",
            "--poll-interval",
            "0.2",
            *extra,
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _start_runs(db_url, count, n=4):
    from charter.client.client import Client

    with Client(db_url) as client:
        return {client.start("crashy", {"n": n}, run_id=f"crash-{i}"): n for i in range(count)}


def _wait_all(db_url, run_ids, timeout):
    deadline = time.monotonic() + timeout
    with psycopg.connect(db_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            statuses = dict(
                conn.execute(
                    "SELECT id, status FROM charter.runs WHERE id = ANY(%s)", (list(run_ids),)
                ).fetchall()
            )
            if all(status != "running" for status in statuses.values()):
                return statuses
            time.sleep(0.2)
    raise AssertionError(f"runs still running after {timeout}s: {statuses}")


def _wait_until_working(db_url, worker, timeout=60):
    """Until the worker has claimed something: the restart must hit a worker at work."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(db_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            assert worker.poll() is None, worker.communicate(timeout=5)[0]
            if conn.execute("SELECT count(*) FROM charter.tasks WHERE attempts > 0").fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError(f"the worker claimed nothing within {timeout}s")


def _install(project, db_url):
    result = subprocess.run(
        [sys.executable, "-m", "charter", "deploy", "crashflows"],
        cwd=project,
        env=charter_env(CHARTER_DATABASE_URL=db_url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def _check_exactly_once(db_url, runs):
    with psycopg.connect(db_url) as conn:
        completed = conn.execute(
            "SELECT run_id, step_slug, task_index, count(*) FROM charter.step_executions "
            "WHERE status = 'completed' AND run_id = ANY(%s) GROUP BY 1, 2, 3",
            (list(runs),),
        ).fetchall()
        receipts = conn.execute(
            "SELECT count(*) FROM charter.step_receipts WHERE run_id = ANY(%s)", (list(runs),)
        ).fetchone()[0]
        outputs = dict(
            conn.execute(
                "SELECT id, output FROM charter.runs WHERE id = ANY(%s)", (list(runs),)
            ).fetchall()
        )
    assert all(count == 1 for *_, count in completed), "a completion was recorded twice"
    expected_tasks = sum(n + 3 for n in runs.values())  # split, n x work, size, join
    assert len(completed) == receipts == expected_tasks
    for run_id, n in runs.items():
        assert outputs[run_id] == {"join": {"sum": sum(i * i for i in range(n)), "size": n}}


def _log(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_sigkill_mid_task_repeatedly_loses_nothing_and_doubles_nothing(tmp_path, db_url):
    project = _project(tmp_path)
    log = tmp_path / "executions.log"
    _install(project, db_url)
    runs = _start_runs(db_url, 25)
    kills = 0
    for _ in range(4):
        seen = len(_log(log))
        worker = _worker(project, db_url, log, sleep="0.2")
        deadline = time.monotonic() + 30
        while len(_log(log)) <= seen:  # wait until it is in the middle of a task
            assert time.monotonic() < deadline, "the worker never started a task"
            time.sleep(0.02)
        time.sleep(random.uniform(0.0, 0.15))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        kills += 1
    survivors = [_worker(project, db_url, log) for _ in range(2)]
    try:
        statuses = _wait_all(db_url, runs, timeout=120)
    finally:
        for worker in survivors:
            worker.terminate()
            worker.wait(30)
    assert set(statuses.values()) == {"completed"}
    _check_exactly_once(db_url, runs)
    started_not_ended = [e for e in _log(log) if e["event"] == "start"]
    assert len(started_not_ended) >= sum(n + 3 for n in runs.values())
    with psycopg.connect(db_url) as conn:
        lost = conn.execute(
            "SELECT count(*) FROM charter.step_executions WHERE run_id = ANY(%s)"
            " AND error->>'type' = 'LeaseExpired'",
            (list(runs),),
        ).fetchone()[0]
    assert lost >= 1, f"{kills} kills mid-run should have cost at least one attempt"


def test_several_workers_never_run_one_task_twice_at_once_and_fan_in_starts_once(tmp_path, db_url):
    project = _project(tmp_path)
    log = tmp_path / "executions.log"
    _install(project, db_url)
    runs = _start_runs(db_url, 30, n=5)
    workers = [_worker(project, db_url, log, "--concurrency", "4", sleep="0.02") for _ in range(3)]
    try:
        statuses = _wait_all(db_url, runs, timeout=120)
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(30)
    assert set(statuses.values()) == {"completed"}
    _check_exactly_once(db_url, runs)
    events = _log(log)
    starts = {}
    for event in events:
        key = (event["run"], event["step"], event["index"])
        if event["event"] == "start":
            starts.setdefault(key, []).append(event)
    assert all(len(s) == 1 for s in starts.values()), "a task was executed twice"
    joins = [k for k in starts if k[1] == "join"]
    assert len(joins) == len(runs)
    assert len({e["pid"] for e in events}) > 1  # the work really was shared


def test_sigterm_finishes_in_flight_work_then_exits_and_a_second_signal_exits_at_once(
    tmp_path, db_url
):
    project = _project(tmp_path)
    log = tmp_path / "executions.log"
    _install(project, db_url)
    runs = _start_runs(db_url, 1, n=1)
    worker = _worker(project, db_url, log, "--grace", "20", sleep="2")
    deadline = time.monotonic() + 30
    while not any(e["event"] == "start" for e in _log(log)):
        assert time.monotonic() < deadline, "the worker never started the task"
        time.sleep(0.05)
    worker.send_signal(signal.SIGTERM)
    output, _ = worker.communicate(timeout=30)
    assert worker.returncode == 0, output
    assert "finishing in-flight tasks" in output
    ended = [e for e in _log(log) if e["event"] == "end"]
    assert len(ended) == 1  # the in-flight task finished before the exit
    with psycopg.connect(db_url) as conn:
        step = conn.execute(
            "SELECT status FROM charter.step_states WHERE run_id = %s AND step_slug = 'split'",
            (next(iter(runs)),),
        ).fetchone()
    assert step == ("completed",)

    impatient = _worker(project, db_url, log, "--grace", "20", sleep="5")
    deadline = time.monotonic() + 30
    while sum(e["event"] == "start" for e in _log(log)) < 2:
        assert time.monotonic() < deadline, "the second worker never started a task"
        time.sleep(0.05)
    impatient.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    impatient.send_signal(signal.SIGTERM)
    output, _ = impatient.communicate(timeout=10)
    assert impatient.returncode == 130, output
    # Nothing is lost: the abandoned task returns through its lease and a new worker ends it.
    finisher = _worker(project, db_url, log, sleep="0.01")
    try:
        assert set(_wait_all(db_url, runs, timeout=60).values()) == {"completed"}
    finally:
        finisher.terminate()
        finisher.wait(30)
    _check_exactly_once(db_url, runs)


def test_workers_reconnect_after_postgresql_restarts(tmp_path):
    data_dir = tmp_path / "pg"
    server = embedded.ensure_running(data_dir, settings={"fsync": "off"})
    db_url = server.url()
    project = _project(tmp_path)
    log = tmp_path / "executions.log"
    try:
        _install(project, db_url)
        runs = _start_runs(db_url, 10)
        worker = _worker(project, db_url, log, sleep="0.1")
        _wait_until_working(db_url, worker)  # a loaded machine may take seconds to start it
        embedded.stop(data_dir)
        time.sleep(2.0)
        embedded.ensure_running(data_dir, settings={"fsync": "off"})
        try:
            statuses = _wait_all(db_url, runs, timeout=90)
        finally:
            worker.terminate()
            output, _ = worker.communicate(timeout=30)
        assert set(statuses.values()) == {"completed"}, output
        assert "database unavailable" in output
        _check_exactly_once(db_url, runs)
    finally:
        embedded.stop(data_dir)
