"""Nothing a handler returns or raises, and no error while recording, stops a worker.

Each test reproduces a report: the worker stayed alive but froze, died, or failed runs
that should have waited or completed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time

import psycopg
import pytest

from charter import Flow, NonRetryable
from charter.client.client import Client
from charter.errors import RunInputError
from charter.worker.completion import Completer
from tests.engine import evidence
from tests.workers import running_worker


def _ok_flow() -> Flow:
    flow = Flow("ok_after")
    flow.step(slug="noop")(lambda run: {"fine": run})
    return flow


def test_a_lone_surrogate_in_an_output_fails_its_step_and_the_worker_carries_on(db_url):
    flow = Flow("surrogates", max_attempts=3)

    @flow.step
    def bad(run: dict) -> dict:  # type: ignore[type-arg]
        if run["how"] == "json":
            return {"a": json.loads('"\\ud800"')}
        return {"name": b"caf\xe9.txt".decode("utf-8", "surrogateescape")}

    ok = _ok_flow()
    with running_worker(db_url, flow, ok), Client(db_url) as client:
        runs = [client.start(flow, {"how": how}) for how in ("json", "filename")]
        results = [client.wait(run_id, timeout=30) for run_id in runs]
        after = client.wait(client.start(ok, 1), timeout=30)
    for run in results:
        assert run.status == "failed"
        assert run.error["code"] == "STEP_OUTPUT_INVALID"
        assert "lone surrogate" in run.error["message"]
        assert run.steps[0].attempts == 1  # the same output would be refused again
    assert after.status == "completed" and after.output == {"noop": {"fine": 1}}


def test_an_error_while_recording_is_logged_the_attempt_failed_and_the_loop_goes_on(
    db_url, monkeypatch, caplog
):
    real_record = Completer.record
    injected = []

    async def record_once_broken(self, batch, *, claim=False):
        # The group fails with its claim and again alone (a claim that failed is not
        # held against the results): the first two calls.
        if len(injected) < 2:
            injected.append((len(batch), claim))
            raise RuntimeError("injected completion failure")
        return await real_record(self, batch, claim=claim)

    monkeypatch.setattr(Completer, "record", record_once_broken)
    flow = Flow("recorded", max_attempts=2, base_delay=0)
    flow.step(slug="one")(lambda run: run)
    with (
        caplog.at_level(logging.ERROR, "charter.worker"),
        running_worker(db_url, flow) as worker,
        Client(db_url) as client,
    ):
        first = client.wait(client.start(flow, 1), timeout=30)
        second = client.wait(client.start(flow, 2), timeout=30)
        # The worker counts a completion once the database confirmed it, which a waiting
        # client may hear of a moment before the count moves.
        deadline = time.monotonic() + 10
        while worker.completed < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert worker.completed == 2
    assert injected == [(1, True), (1, False)]
    assert "injected completion failure" in caplog.text
    assert first.status == "completed" and second.status == "completed"
    with psycopg.connect(db_url) as conn:
        error = conn.execute(
            "SELECT error FROM charter.step_executions WHERE run_id = %s AND status = 'failed'",
            (first.id,),
        ).fetchone()[0]
    assert error["type"] == "OutputRejected" and "injected" in error["message"]


def _nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_deep_inputs_are_refused_at_the_door_and_never_kill_a_worker(db_url):
    flow = Flow("deep", max_attempts=2)
    flow.step(slug="echo")(lambda run: "read it")
    ok = _ok_flow()
    with Client(db_url) as client:
        for depth in (101, 990, 5000):
            with pytest.raises(RunInputError, match="more than 100 levels"):
                client.start(flow, _nested(depth))
        assert client.list_runs() == []
        accepted = client.start(flow, _nested(100))  # the documented limit
    with psycopg.connect(db_url, autocommit=True) as conn:
        # SQL callers meet the same limit.
        with pytest.raises(psycopg.Error, match="more than 100 levels"):
            conn.execute(
                "SELECT charter.start_run('deep', %s::jsonb)", ("[" * 101 + "1" + "]" * 101,)
            )
        # A run whose input was changed behind charter's back is deeper than Python decodes.
        poisoned = conn.execute("SELECT charter.start_run('deep', '1')").fetchone()[0]["runId"]
        conn.execute(
            "UPDATE charter.runs SET input = %s::jsonb WHERE id = %s",
            ("[" * 5000 + "]" * 5000, poisoned),
        )
    with running_worker(db_url, flow, ok) as worker, Client(db_url) as client:
        assert client.wait(accepted, timeout=30).status == "completed"
        after = client.wait(client.start(ok, 1), timeout=30)
        with psycopg.connect(db_url) as conn:
            deadline = time.monotonic() + 30
            while (status := _status(conn, poisoned)) == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
            error = conn.execute("SELECT error FROM charter.runs WHERE id = %s", (poisoned,))
            error = error.fetchone()[0]
        assert worker.completed == 2
    assert status == "failed" and error["code"] == "RUN_INPUT_INVALID"
    assert after.status == "completed"


def _status(conn, run_id):
    return conn.execute("SELECT status FROM charter.runs WHERE id = %s", (run_id,)).fetchone()[0]


def test_deep_outputs_fail_their_step(db_url):
    flow = Flow("deep_out", max_attempts=3)
    flow.step(slug="nest")(lambda run: _nested(run))
    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, 2000), timeout=30)
    assert run.status == "failed" and run.error["code"] == "STEP_OUTPUT_INVALID"
    assert "more than 100 levels" in run.error["message"]


class _Custom(BaseException):
    pass


def _raising(kind: str) -> None:
    if kind == "exit":
        sys.exit(3)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "base":
        raise _Custom("a BaseException of the handler's own")
    raise GeneratorExit


@pytest.mark.parametrize("kind", ["exit", "interrupt", "base", "generator_exit"])
@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_base_exceptions_in_handlers_fail_the_step_not_the_worker(db_url, kind, is_async):
    flow = Flow("base_exceptions", max_attempts=1)
    if is_async:

        @flow.step
        async def boom(run: str) -> None:
            _raising(run)
    else:

        @flow.step
        def boom(run: str) -> None:
            _raising(run)

    ok = _ok_flow()
    with running_worker(db_url, flow, ok), Client(db_url) as client:
        run = client.wait(client.start(flow, kind), timeout=30)
        after = client.wait(client.start(ok, 1), timeout=30)
    expected = {
        "exit": "SystemExit",
        "interrupt": "KeyboardInterrupt",
        "base": "_Custom",
        "generator_exit": "GeneratorExit",
    }
    assert run.status == "failed" and run.error["type"] == expected[kind]
    assert "_raising" in run.error["traceback"]
    assert after.status == "completed"


def test_non_retryable_errors_and_retry_filters(db_url):
    flow = Flow("retry_rules", max_attempts=3, base_delay=0)

    class Declined(Exception):
        permanent = True

    @flow.step
    def marked(run: str) -> None:
        if run == "non_retryable":
            raise NonRetryable("card declined")
        if run == "permanent_attr":
            raise Declined("declined by the bank")

    @flow.step(depends_on=[marked], retry_on=[TimeoutError])
    def only_timeouts(run: str, marked: None) -> None:
        if run == "retry_on":
            raise ValueError("not a timeout: no retry")

    @flow.step(depends_on=[only_timeouts], no_retry_on=KeyError)
    def not_key_errors(run: str, only_timeouts: None) -> None:
        if run == "no_retry_on":
            raise KeyError("missing")
        if run == "retried":
            raise ValueError("flaky")

    with running_worker(db_url, flow), Client(db_url) as client:
        runs = {
            case: client.wait(client.start(flow, case), timeout=30)
            for case in ("non_retryable", "permanent_attr", "retry_on", "no_retry_on", "retried")
        }
    attempts = {case: sum(s.attempts for s in run.steps) for case, run in runs.items()}
    assert all(run.status == "failed" for run in runs.values())
    assert attempts == {
        "non_retryable": 1,
        "permanent_attr": 1,
        "retry_on": 2,  # marked, then one attempt of only_timeouts
        "no_retry_on": 3,
        "retried": 5,  # two steps once, then all three attempts
    }
    assert runs["non_retryable"].error["type"] == "NonRetryable"


def test_hung_sync_handlers_keep_their_slots_and_nothing_is_claimed_that_cannot_start(
    db_url, caplog
):
    hung = Flow("hung", max_attempts=1)

    @hung.step(timeout=1)
    def stuck(run: float) -> None:
        time.sleep(run)  # cannot be interrupted: a thread

    noop = Flow("noop_after_hung", max_attempts=1)
    noop.step(slug="quick", timeout=1)(lambda run: "done")
    with (
        caplog.at_level(logging.WARNING, "charter.worker"),
        running_worker(db_url, hung, noop, concurrency=2) as worker,
        Client(db_url) as client,
    ):
        stuck_runs = [client.start(hung, 4) for _ in range(2)]
        for run_id in stuck_runs:
            assert client.wait(run_id, timeout=30).error["type"] == "Timeout"
        assert worker.executor.overrunning == 2
        quick = client.start(noop, None)
        quick_run = client.wait(quick, timeout=30)
    # The no-op waited for a thread instead of timing out in the queue of the thread pool.
    assert quick_run.status == "completed", quick_run.error
    assert "its slot stays busy until the handler returns" in caplog.text
    assert "its slot is free again" in caplog.text


def test_a_blocked_event_loop_is_logged_with_the_step_and_fails_it_as_a_timeout(db_url, caplog):
    flow = Flow("blocking", max_attempts=1)

    @flow.step(timeout=1)
    async def sleepy(run: float) -> str:
        time.sleep(run)  # blocks the event loop
        return "late"

    with (
        caplog.at_level(logging.WARNING, "charter.worker"),
        running_worker(db_url, flow, block_warning_seconds=0.5) as worker,
        Client(db_url) as client,
    ):
        run = client.wait(client.start(flow, 3), timeout=30)
        assert worker.watchdog.blocks_seen >= 1
    assert run.status == "failed" and run.error["type"] == "Timeout"
    assert "blocked the worker's event loop" in run.error["message"]
    assert (
        "step sleepy of run" in caplog.text and "has blocked the worker's event loop" in caplog.text
    )
    assert "test_worker_robustness.py" in caplog.text  # the line that blocks


def test_process_isolation_kills_a_hung_handler_and_returns_results_and_errors(db_url):
    from tests.isolated_handlers import flow

    with running_worker(db_url, flow) as worker, Client(db_url) as client:
        hung = client.wait(client.start(flow, {"mode": "hang"}), timeout=60)
        ok = client.wait(client.start(flow, {"mode": "ok"}), timeout=60)
        raised = client.wait(client.start(flow, {"mode": "raise", "value": 5}), timeout=60)
        exited = client.wait(client.start(flow, {"mode": "exit"}), timeout=60)
        assert worker.executor.overrunning == 0
    assert hung.status == "failed" and hung.error["type"] == "Timeout"
    assert "process was killed" in hung.error["message"]
    assert ok.status == "completed", ok.error
    child = ok.output["after"]
    assert child["step"] == "after" and child["child"] != f"pid {os.getpid()}"
    assert child["me"] != os.getpid() and ok.usd_cost == pytest.approx(0.25)
    assert raised.error["type"] == "NonRetryable" and raised.error["message"] == "refused 5"
    assert "isolated_handlers.py" in raised.error["traceback"]
    assert exited.error["type"] == "ProcessDied" and exited.error["exitCode"] == 7
    with psycopg.connect(db_url) as conn:
        assert [e[3] for e in evidence(conn, hung.id)] == ["failed"]


def test_process_isolation_needs_a_module_level_function():
    from charter.errors import FlowDefinitionError

    flow = Flow("nested_isolation")
    with pytest.raises(FlowDefinitionError, match="not a module-level function"):

        @flow.step(isolation="process")
        def inner(run: dict) -> None:  # type: ignore[type-arg]
            pass

    with pytest.raises(FlowDefinitionError, match="isolation='thread' is not known"):
        flow.step(slug="a", isolation="thread")(lambda run: None)
    with pytest.raises(FlowDefinitionError, match="not both"):
        flow.step(slug="b", retry_on=ValueError, no_retry_on=KeyError)(lambda run: None)
    with pytest.raises(FlowDefinitionError, match="takes exception classes"):
        flow.step(slug="c", retry_on=["ValueError"])(lambda run: None)


def test_an_error_in_the_heartbeat_is_logged_and_the_leases_are_still_renewed(
    db_url, monkeypatch, caplog
):
    from charter.worker.runner import Worker

    real = Worker._refresh_versions
    broken = []

    async def refresh_once_broken(self):
        if not broken:
            broken.append(1)
            raise RuntimeError("injected heartbeat failure")
        return await real(self)

    monkeypatch.setattr(Worker, "_refresh_versions", refresh_once_broken)
    flow = Flow("long_step", max_attempts=1)

    @flow.step(timeout=30)
    async def slow(run: float) -> str:
        await asyncio.sleep(run)
        return "done"

    with (
        caplog.at_level(logging.ERROR, "charter.worker"),
        running_worker(db_url, flow, lease_seconds=2) as worker,
        Client(db_url) as client,
    ):
        run = client.wait(client.start(flow, 5.0), timeout=30)  # longer than two leases
        assert worker.heartbeat_errors == 1
    assert "injected heartbeat failure" in caplog.text
    assert run.status == "completed" and run.steps[0].attempts == 1  # the lease never lapsed
