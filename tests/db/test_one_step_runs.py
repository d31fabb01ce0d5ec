"""A run of a flow of one plain step keeps no readiness rows (step_states): its step's state
is read off the run's status. Whatever path it takes (started alone or in a batch, completed
set-based or one by one, failed, retried, cancelled), it reads as a run that kept them
would: get_run shows its step, and the live projection equals the one derived from the
facts (WF-15)."""

from typing import Any

import pytest
from psycopg.types.json import Jsonb

from charter import Client, Flow
from charter.db.sqlstate import charter_errors
from charter.errors import RunStateError

from ..engine import claim, complete, fail, install, projections, run_row, start


def one_step(slug: str, max_attempts: int = 1) -> Flow:
    flow = Flow(slug)

    @flow.step(max_attempts=max_attempts)
    def only(run: dict[str, Any]) -> int:
        return int(run["n"]) * 2

    return flow


def readiness_rows(conn, run_id: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM charter.step_states WHERE run_id = %s", (run_id,)
    ).fetchone()[0]


def step_of(conn, run_id: str) -> dict[str, Any]:
    [step] = run_row(conn, run_id)["steps"]
    return step


def assert_projection_matches(conn, run_id: str) -> dict[str, Any]:
    live, computed = projections(conn, run_id)
    assert live == computed
    return live


def record(conn, task, output: Any) -> str:
    """Completes ``task`` as a worker does: record_outcomes, set-based, naming its org."""
    [(outcome,)] = conn.execute(
        "SELECT outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[], %s::jsonb[], %s,"
        " 'test-worker', %s::numeric[], NULL, %s::text[])",
        ([task.id], [task.token], [Jsonb(output)], [None], [False], [0], [task.org]),
    ).fetchall()
    return outcome


def test_started_alone_or_in_a_batch_a_one_step_run_writes_no_readiness_rows(conn):
    install(conn, one_step("lone_start"))
    alone = start(conn, "lone_start", {"n": 1})
    batch = conn.execute(
        "SELECT charter.start_runs('lone_start', %s)", (Jsonb([{"n": 2}, {"n": 3}]),)
    ).fetchone()[0]
    for run_id in [alone, *batch]:
        assert readiness_rows(conn, run_id) == 0
        step = step_of(conn, run_id)
        assert (step["slug"], step["status"], step["tasks"], step["remainingTasks"]) == (
            "only",
            "ready",
            1,
            1,
        )
        live = assert_projection_matches(conn, run_id)
        assert live["steps"]["$end"] == {
            "status": "waiting",
            "required": 1,
            "arrivals": 0,
            "initialTasks": None,
            "remainingTasks": None,
        }
    assert len(claim(conn, ["lone_start"])) == 3


@pytest.mark.parametrize("path", ["record_outcomes", "complete_task"])
def test_a_one_step_run_completes_with_its_step_on_either_path(conn, path):
    install(conn, one_step(f"lone_{path}"))
    run_id = start(conn, f"lone_{path}", {"n": 21})
    [task] = claim(conn, [f"lone_{path}"])
    done = record(conn, task, 42) if path == "record_outcomes" else complete(conn, task, 42)
    assert done == "completed"
    run = run_row(conn, run_id)
    assert (run["status"], run["output"]) == ("completed", {"only": 42})
    step = step_of(conn, run_id)
    assert (step["status"], step["remainingTasks"], step["output"], step["attempts"]) == (
        "completed",
        0,
        42,
        1,
    )
    assert step["completedAt"] == run["finishedAt"]
    live = assert_projection_matches(conn, run_id)
    assert live["steps"]["$end"]["status"] == "completed"
    assert readiness_rows(conn, run_id) == 0
    # The same completion again is stale and changes nothing.
    assert record(conn, task, 43) == "stale"
    assert run_row(conn, run_id)["output"] == {"only": 42}


def test_a_failed_one_step_run_is_retried_and_a_cancelled_one_stays_cancelled(conn):
    install(conn, one_step("lone_retry"))
    run_id = start(conn, "lone_retry", {"n": 1})
    [task] = claim(conn, ["lone_retry"])
    assert fail(conn, task, "flaky", permanent=True) == "failed"
    assert run_row(conn, run_id)["status"] == "failed"
    step = step_of(conn, run_id)
    assert (step["status"], step["error"]["message"]) == ("failed", "flaky")
    assert_projection_matches(conn, run_id)

    with charter_errors():
        assert conn.execute("SELECT charter.retry_run(%s)", (run_id,)).fetchone()[0] == "running"
    assert step_of(conn, run_id)["status"] == "ready"
    assert_projection_matches(conn, run_id)
    [again] = claim(conn, ["lone_retry"])
    assert again.attempt == 1
    assert record(conn, again, 2) == "completed"
    assert run_row(conn, run_id)["output"] == {"only": 2}
    assert_projection_matches(conn, run_id)

    cancelled = start(conn, "lone_retry", {"n": 5})
    conn.execute("SELECT charter.cancel_run(%s)", (cancelled,))
    assert step_of(conn, cancelled)["status"] == "cancelled"
    assert_projection_matches(conn, cancelled)
    assert claim(conn, ["lone_retry"]) == []


def test_a_one_step_flow_run_by_charter_keeps_the_status_its_step_gives_it(db_url):
    with Client(db_url) as client:
        run_id = client.start(one_step("lone_registry"), {"n": 1})
        with pytest.raises(RunStateError, match="executed by charter"):
            client.registry.update_invocation(run_id, status="completed")
        client.cancel(run_id)  # no task left, its evidence says it ran here
        with pytest.raises(RunStateError, match="executed by charter"):
            client.registry.update_invocation(run_id, status="completed")


def test_a_flow_of_two_steps_or_of_one_step_that_waits_keeps_its_rows(conn):
    two = Flow("two_steps")

    @two.step()
    def first(run: dict[str, Any]) -> int:
        return 1

    @two.step(depends_on=[first])
    def second(first: int) -> int:
        return first + 1

    install(conn, two)
    mapped = Flow("one_map")

    @mapped.map(over="run")
    def each(item: int) -> int:
        return item

    install(conn, mapped)
    assert readiness_rows(conn, start(conn, "two_steps", {})) == 3
    assert readiness_rows(conn, start(conn, "one_map", [1, 2])) == 2
