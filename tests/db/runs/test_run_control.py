"""cancel_run, retry_run, and the projection rebuilt from facts (WF-15)."""

from typing import Any

import pytest

from charter.db.sqlstate import charter_errors
from charter.errors import RunNotFoundError, RunStateError
from tests.engine import (
    claim,
    complete,
    drain,
    evidence,
    fail,
    handle,
    install,
    projections,
    run_row,
    start,
)
from tests.flows_for_tests import diamond

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def _call(conn, function, run_id):
    with charter_errors():
        return conn.execute(f"SELECT charter.{function}(%s)", (run_id,)).fetchone()[0]


def test_cancel_stops_a_running_run_and_late_results_are_stale(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 2})
    [seed] = claim(conn, ["diamond"])
    assert _call(conn, "cancel_run", run_id) == "cancelled"
    assert complete(conn, seed, [0, 1]) == "stale"
    run = run_row(conn, run_id)
    assert run["status"] == "cancelled" and run["finishedAt"] is not None
    assert claim(conn, ["diamond"]) == []
    assert _call(conn, "cancel_run", run_id) == "cancelled"  # again: a no-op
    assert evidence(conn, run_id) == [("$run", 0, 0, "cancelled", True)]


def test_cancel_refuses_finished_runs_and_unknown_ids(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 1})
    drain(conn, flow)
    with pytest.raises(RunStateError, match="is completed; only a running run"):
        _call(conn, "cancel_run", run_id)
    with pytest.raises(RunNotFoundError):
        _call(conn, "cancel_run", "no-such-run")
    with pytest.raises(RunStateError, match="only a failed run can be retried"):
        _call(conn, "retry_run", run_id)


def test_retry_resumes_a_failed_run_without_rerunning_completed_work(conn):
    flow = diamond(max_attempts=1)
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 4})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, [0, 1, 2, 3])
    tasks = claim(conn, ["diamond"])
    by_key = {(t.step, t.index): t for t in tasks}
    complete(conn, by_key[("square", 0)], 0)
    complete(conn, by_key[("square", 1)], 1)
    assert fail(conn, by_key[("square", 2)], "flaky network") == "failed"
    assert run_row(conn, run_id)["status"] == "failed"

    assert _call(conn, "retry_run", run_id) == "running"
    again = claim(conn, ["diamond"])
    assert sorted((t.step, t.index, t.attempt) for t in again) == [
        ("count", 0, 1),
        ("square", 2, 1),
        ("square", 3, 1),
    ]
    for task in again:
        complete(conn, task, handle(flow, task))
    drain(conn, flow)
    run = run_row(conn, run_id)
    assert run["status"] == "completed" and run["error"] is None
    assert run["output"] == {"total": {"sum": 0 + 1 + 4 + 9, "count": 4}}
    completed = [e for e in evidence(conn, run_id) if e[3] == "completed"]
    assert sorted((e[0], e[1]) for e in completed) == [
        ("count", 0),
        ("seed", 0),
        ("square", 0),
        ("square", 1),
        ("square", 2),
        ("square", 3),
        ("total", 0),
    ]  # each exactly once: nothing completed was run again


def _assert_projection_matches(conn, run_id):
    live, computed = projections(conn, run_id)
    assert live == computed


def test_wf15_the_live_projection_always_equals_the_one_derived_from_facts(conn):
    flow = diamond(max_attempts=2)
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 5})
    _assert_projection_matches(conn, run_id)
    drain(conn, flow, limit=2, check=lambda c: _assert_projection_matches(c, run_id))
    assert run_row(conn, run_id)["status"] == "completed"

    failing = start(conn, "diamond", {"n": 3})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, [0, 1, 2])
    _assert_projection_matches(conn, failing)
    tasks = claim(conn, ["diamond"])
    for task in tasks[:2]:
        complete(conn, task, handle(flow, task))
        _assert_projection_matches(conn, failing)
    fail(conn, tasks[2], permanent=True)
    _assert_projection_matches(conn, failing)
    _call(conn, "retry_run", failing)
    _assert_projection_matches(conn, failing)
    drain(conn, flow, check=lambda c: _assert_projection_matches(c, failing))

    cancelled = start(conn, "diamond", {"n": 2})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, [0, 1])
    _call(conn, "cancel_run", cancelled)
    _assert_projection_matches(conn, cancelled)


def test_wf15_rebuild_repairs_a_damaged_projection(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 3})
    for _ in range(3):  # advance part of the way
        [task, *_] = claim(conn, ["diamond"], limit=1)
        complete(conn, task, handle(flow, task))
    healthy = projections(conn, run_id)[0]
    conn.execute(
        "UPDATE charter.step_states SET status = 'waiting', arrivals = 0, "
        "remaining_tasks = NULL WHERE run_id = %s",
        (run_id,),
    )
    conn.execute(
        "UPDATE charter.runs SET status = 'failed', finished_at = now(), "
        "error = '{}' WHERE id = %s",
        (run_id,),
    )
    assert projections(conn, run_id)[0] != healthy
    assert _call(conn, "rebuild_run_projection", run_id) == healthy
    assert projections(conn, run_id)[0] == healthy
    assert run_row(conn, run_id)["finishedAt"] is None
    drain(conn, flow)  # and the run carries on from the repaired projection
    assert run_row(conn, run_id)["status"] == "completed"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE charter.step_executions SET status = 'failed'",
        "DELETE FROM charter.step_executions",
        "UPDATE charter.step_receipts SET idempotency_key = 'x'",
        "DELETE FROM charter.step_receipts",
    ],
)
def test_wf09_evidence_and_receipts_are_append_only(conn, statement):
    from charter.errors import WorkflowVersionImmutableError

    flow = diamond()
    install(conn, flow)
    start(conn, "diamond", {"n": 1})
    drain(conn, flow)
    with pytest.raises(WorkflowVersionImmutableError, match="append-only"), charter_errors():
        conn.execute(statement)


def test_delete_flow_and_data_removes_runs_and_all_their_rows(conn):
    flow = diamond()
    install(conn, flow)
    start(conn, "diamond", {"n": 2})
    drain(conn, flow)
    other = diamond()
    other.slug = "other_diamond"
    install(conn, other)
    kept = start(conn, "other_diamond", {"n": 1})
    drain(conn, other)
    deleted = conn.execute("SELECT charter.delete_flow_and_data('diamond')").fetchone()[0]
    assert deleted == {"deleted": True, "runs": 1, "versions": 1}
    for table in ("runs", "tasks", "step_states", "inbox", "step_receipts", "step_executions"):
        column = "id" if table == "runs" else "run_id"
        remaining = conn.execute(
            f"SELECT count(*) FROM charter.{table} WHERE {column} <> %s", (kept,)
        ).fetchone()
        assert remaining == (0,), f"charter.{table} kept rows of the deleted flow"
    assert run_row(conn, kept)["status"] == "completed"


def _retry_shapes() -> dict[str, tuple[Any, Any, str]]:
    """Flows whose step `target` fails, by how many dependencies `target` has."""
    from charter import Flow

    zero = Flow("retry_zero", max_attempts=1)
    zero.step(slug="target")(lambda run: run["x"])

    one = Flow("retry_one", max_attempts=1)
    a1 = one.step(slug="a")(lambda run: run["x"])
    one.step(slug="target", depends_on=[a1])(lambda a: a + 1)

    two = Flow("retry_two", max_attempts=1)
    a2 = two.step(slug="a")(lambda run: run["x"])
    b2 = two.step(slug="b")(lambda run: run["x"] * 2)
    c2 = two.step(slug="c", depends_on=[a2])(lambda a: a * 3)
    two.step(slug="target", depends_on=[a2, b2, c2])(lambda a, b, c: a + b + c)

    mapped = Flow("retry_map", max_attempts=1)
    src = mapped.step(slug="a")(lambda run: [run["x"], run["x"] + 1])
    mapped.map(over=src, slug="target")(lambda item: item * 10)

    root_map = Flow("retry_root_map", max_attempts=1)
    root_map.map(over="run", slug="target")(lambda item: item * 10)
    return {
        "0 dependencies": (zero, {"x": 1}, "target"),
        "1 dependency": (one, {"x": 1}, "target"),
        "3 dependencies": (two, {"x": 1}, "target"),
        "map over a step": (mapped, {"x": 1}, "target"),
        "map over the run": (root_map, [1, 2, 3], "target"),
    }


@pytest.mark.parametrize("shape", list(_retry_shapes()))
def test_retry_resumes_a_failed_step_of_every_shape(conn, shape):
    flow, run_input, failing_step = _retry_shapes()[shape]
    install(conn, flow)
    run_id = start(conn, flow.slug, run_input)
    failed_once = False
    while tasks := claim(conn, [flow.slug]):
        for task in tasks:
            # Fail one task of the target step (for a map: its last element) once.
            last = task.step == failing_step and (task.item is None or task.index > 0)
            if last and not failed_once:
                assert fail(conn, task, "flaky", permanent=True) == "failed"
                failed_once = True
            elif run_row(conn, run_id)["status"] == "running":
                complete(conn, task, handle(flow, task))
    assert failed_once and run_row(conn, run_id)["status"] == "failed"

    assert _call(conn, "retry_run", run_id) == "running"
    drain(conn, flow)
    run = run_row(conn, run_id)
    assert run["status"] == "completed", run
    completed = [e for e in evidence(conn, run_id) if e[3] == "completed"]
    assert len(completed) == len({(e[0], e[1]) for e in completed})  # nothing ran twice
    assert projections(conn, run_id)[0] == projections(conn, run_id)[1]
