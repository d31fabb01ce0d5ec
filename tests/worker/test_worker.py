"""The worker running real handlers in-process: results, timeouts, context, bad input."""

import asyncio
import threading
import time

import psycopg
import pytest

from charter import Flow
from charter.client.client import Client
from charter.errors import RunInputError
from tests.engine import evidence
from tests.flows_for_tests import analyze_site, diamond
from tests.workers import running_worker


def test_a_worker_runs_a_flow_with_a_map_and_a_fan_in_end_to_end(db_url):
    flow = analyze_site()
    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow, {"pages": ["a", "bb", "ccc"]})
        run = client.wait(run_id, timeout=30)
    assert run.status == "completed"
    assert run.output == {"report": {"summary": "3 pages", "total": 6.0}}
    assert [(s.slug, s.status, s.tasks, s.attempts) for s in run.steps] == [
        ("fetch", "completed", 1, 1),
        ("score", "completed", 3, 3),
        ("summarize", "completed", 1, 1),
        ("report", "completed", 1, 1),
    ]


def test_a_slot_frees_as_soon_as_its_task_finishes(db_url):
    flow = Flow("slots")

    @flow.map(over="run")
    async def work(item: str) -> str:
        await asyncio.sleep(1.5 if item == "slow" else 0.01)
        return item

    with running_worker(db_url, flow, concurrency=2, batch_size=2), Client(db_url) as client:
        run_id = client.start(flow, ["slow"] + [f"fast{n}" for n in range(12)])
        assert client.wait(run_id, timeout=30).status == "completed"
    with psycopg.connect(db_url) as conn:
        finished = dict(
            conn.execute(
                "SELECT task_index, finished_at FROM charter.step_executions WHERE run_id = %s",
                (run_id,),
            ).fetchall()
        )
    slow = finished.pop(0)
    assert max(finished.values()) < slow  # the fast ones did not wait for the slow one


def test_a_worker_never_runs_more_than_its_concurrency_while_claiming_with_its_results(db_url):
    """Both the claim loop and each group's completion claim tasks: together they never fill
    more slots than the worker has, and every chain still reaches its end."""
    flow = Flow("crowd")
    lock = threading.Lock()
    running = [0]
    most = [0]

    def busy() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.002)
        with lock:
            running[0] -= 1

    @flow.step
    def one(run: int) -> int:
        busy()
        return run

    @flow.step(depends_on=[one])
    def two(one: int) -> int:
        busy()
        return one + 1

    @flow.step(depends_on=[two])
    def three(two: int) -> int:
        busy()
        return two + 1

    with running_worker(db_url, flow, concurrency=3) as worker, Client(db_url) as client:
        run_ids = client.start_many(flow, list(range(60)))
        runs = [client.wait(run_id, timeout=60) for run_id in run_ids]
    # Once stopped (a claim may be in flight while it serves), every slot is free again: no
    # reservation was lost.
    assert worker.free_slots == 3
    assert [r.output for r in runs] == [{"three": n + 2} for n in range(60)]
    assert most[0] <= 3


def test_a_step_that_overruns_its_timeout_is_failed_and_retried(db_url):
    flow = Flow("timeouts", max_attempts=2, base_delay=0)
    seen = []

    @flow.step(timeout=1)
    async def slow_first(run, ctx):
        seen.append(ctx.attempt)
        if ctx.attempt == 1:
            await asyncio.sleep(5)
        return "second attempt"

    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, {}), timeout=30)
    assert run.status == "completed" and run.output == {"slow_first": "second attempt"}
    assert seen == [1, 2]
    with psycopg.connect(db_url) as conn:
        first = conn.execute(
            "SELECT error FROM charter.step_executions WHERE run_id = %s AND status = 'failed'",
            (run.id,),
        ).fetchone()[0]
    assert first["type"] == "Timeout" and "timeout of 1s" in first["message"]


def test_the_context_carries_a_key_that_is_stable_across_attempts(db_url):
    flow = Flow("keys", max_attempts=3, base_delay=0)
    calls = []
    lock = threading.Lock()

    @flow.map(over="run")
    def charge(item, ctx):
        with lock:
            calls.append((item, ctx.attempt, ctx.idempotency_key, ctx.run_id, ctx.step))
        if ctx.attempt == 1:
            raise ConnectionError("payment API timed out")
        return item

    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, ["a", "b"]), timeout=30)
    assert run.status == "completed"
    keys = {item: {key for i, _, key, _, _ in calls if i == item} for item in ("a", "b")}
    assert len(keys["a"]) == 1 and len(keys["b"]) == 1 and keys["a"] != keys["b"]
    assert sorted((i, a) for i, a, *_ in calls) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert {(r, s) for *_, r, s in calls} == {(run.id, "charge")}


def _failed(db_url, flow, run_input):
    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, run_input), timeout=30)
    assert run.status == "failed"
    return run


def test_input_that_fails_the_type_hints_is_a_recorded_error_not_retried(db_url):
    flow = Flow("typed", max_attempts=3, base_delay=0)

    @flow.step
    def total(run: list[int]) -> int:
        return sum(run)

    with running_worker(db_url, flow), Client(db_url) as client:
        # A Flow object refuses such an input at the door; by slug it reaches the step.
        with pytest.raises(RunInputError, match="does not match what step 'total'"):
            client.start(flow, {"not": "a list"})
        run = client.wait(client.start("typed", {"not": "a list"}), timeout=30)
    assert run.error["code"] == "STEP_INPUT_INVALID" and "the run input" in run.error["message"]
    assert run.steps[0].attempts == 1


def test_bad_outputs_and_huge_errors_are_recorded_and_never_wedge_a_run(db_url):
    flow = Flow("misbehaving", max_attempts=2, base_delay=0)

    @flow.step
    def act(run):
        case = run["case"]
        if case == "set":
            return {1, 2}
        if case == "object":
            return object()
        if case == "nan":
            return float("nan")
        if case == "nul":
            return "a\x00b"
        raise ValueError("x" * 1_000_000)

    expected = {
        "set": "STEP_OUTPUT_INVALID",
        "object": "STEP_OUTPUT_INVALID",
        "nan": "STEP_OUTPUT_INVALID",
        "nul": "STEP_OUTPUT_INVALID",
        "huge": None,
    }
    with running_worker(db_url, flow), Client(db_url) as client:
        runs = {case: client.start(flow, {"case": case}) for case in expected}
        results = {case: client.wait(run_id, timeout=30) for case, run_id in runs.items()}
    for case, code in expected.items():
        run = results[case]
        assert run.status == "failed", case
        assert run.error.get("code") == code, case
        assert run.steps[0].attempts == (1 if code else 2), case
    huge = results["huge"].error
    assert huge["type"] == "ValueError" and len(huge["message"]) < 2_100
    assert "more characters" in huge["message"]


def test_workers_register_heartbeat_and_sign_off(db_url):
    with running_worker(db_url, diamond(), lease_seconds=3) as worker:
        deadline = time.monotonic() + 30
        with psycopg.connect(db_url, autocommit=True) as conn:
            while True:  # the heartbeat (every lease/3 seconds) moves last_heartbeat_at on
                row = conn.execute(
                    "SELECT flows, stopped_at, last_heartbeat_at > started_at "
                    "FROM charter.workers WHERE id = %s",
                    (worker.id,),
                ).fetchone()
                if (row and row[2]) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        assert row == (["diamond"], None, True)
    with psycopg.connect(db_url) as conn:
        stopped = conn.execute(
            "SELECT stopped_at IS NOT NULL FROM charter.workers WHERE id = %s", (worker.id,)
        ).fetchone()
    assert stopped == (True,)


def test_evidence_records_every_attempt_once(db_url):
    flow = diamond()
    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, {"n": 3}), timeout=30)
    with psycopg.connect(db_url) as conn:
        rows = evidence(conn, run.id)
    assert sorted((r[0], r[1], r[3]) for r in rows) == sorted(
        [("seed", 0, "completed"), ("count", 0, "completed"), ("total", 0, "completed")]
        + [("square", i, "completed") for i in range(3)]
    )


def test_an_idle_worker_claims_once_per_run_and_not_again_after_recording_it(db_url):
    """A group that queued nothing (its step has no successor, nothing failed, no backlog)
    does not wake the claim loop: a claim then would find nothing while the caller reads
    its finished run. The next run's NOTIFY wakes it; a chain's next step still rides with
    its predecessor's results."""
    single = Flow("idle_single")

    @single.step
    def only(run: int) -> int:
        return run + 1

    chain = Flow("idle_chain")

    @chain.step
    def first(run: int) -> int:
        return run + 1

    @chain.step(depends_on=[first])
    def second(first: int) -> int:
        return first * 2

    claims: list[str] = []
    with running_worker(db_url, single, chain, poll_interval=30) as worker:
        real = worker.store.execute

        async def observed(call, connection=None):
            if call.query in ("claim_tasks", "record_outcomes_and_claim"):
                claims.append(call.query)
            return await real(call, connection)

        worker.store.execute = observed  # type: ignore[method-assign]
        with Client(db_url) as client:
            runs = [client.wait(client.start(single, n), timeout=30) for n in range(6)]
            time.sleep(0.3)  # a claim the last recording would have woken
            assert [run.output for run in runs] == [{"only": n + 1} for n in range(6)]
            assert claims.count("claim_tasks") <= 7, claims  # one per run, and a spare
            chained = client.wait(client.start(chain, 3), timeout=30)
    assert chained.output == {"second": 8}
    assert "record_outcomes_and_claim" in claims  # second was claimed with first's result


def test_a_limited_step_that_finishes_wakes_the_claim_for_the_task_it_held_back(db_url):
    """A claim passes over a task whose concurrency slot is taken, and nothing notifies when
    the slot frees: the worker that records the finished step claims again at once, not at
    its next poll (an hour away here)."""
    one_at_a_time = Flow("one_at_a_time", concurrency={"limit": 1})

    @one_at_a_time.step
    def only(run: int) -> int:
        return run

    with running_worker(db_url, one_at_a_time, poll_interval=3600), Client(db_url) as client:
        runs = client.wait_many([client.start(one_at_a_time, n) for n in range(5)], timeout=30)
    assert [run.output for run in runs] == [{"only": n} for n in range(5)]
