"""The SQL state machine, driven directly: start, claim, complete, fail, map, projection."""

import threading

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter.errors import (
    FlowNotFoundError,
    ReadinessOverflowError,
    RunIdConflictError,
    RunInputError,
)
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
from tests.flows_for_tests import analyze_site, diamond, flow_from_shape, two_leaves

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def _steps(conn, run_id):
    return dict(
        conn.execute(
            "SELECT step_slug, status FROM charter.step_states WHERE run_id = %s", (run_id,)
        )
    )


def test_start_run_creates_readiness_for_every_node_and_queues_the_roots(conn):
    install(conn, diamond())
    run_id = start(conn, "diamond", {"n": 3})
    states = conn.execute(
        "SELECT step_slug, required, arrivals, status FROM charter.step_states "
        "WHERE run_id = %s ORDER BY step_slug",
        (run_id,),
    ).fetchall()
    assert states == [
        ("$end", 1, 0, "waiting"),
        ("count", 1, 0, "waiting"),
        ("seed", 0, 0, "ready"),
        ("square", 1, 0, "waiting"),
        ("total", 2, 0, "waiting"),
    ]
    queued = conn.execute(
        "SELECT step_slug, status FROM charter.tasks WHERE run_id = %s", (run_id,)
    ).fetchall()
    assert queued == [("seed", "queued")]


def test_a_run_completes_with_the_outputs_of_its_leaf_steps(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 4})
    assert drain(conn, flow) == 1 + 4 + 1 + 1
    run = run_row(conn, run_id)
    assert run["status"] == "completed"
    assert run["output"] == {"total": {"sum": 0 + 1 + 4 + 9, "count": 4}}
    leaves = two_leaves()
    install(conn, leaves)
    other = start(conn, "two_leaves", {"x": 2})
    drain(conn, leaves)
    assert run_row(conn, other)["output"] == {"b": 3, "c": 20}


def test_claim_hands_over_inputs_by_name_the_run_input_and_a_stable_key(conn):
    flow = analyze_site()
    install(conn, flow)
    run_id = start(conn, flow.slug, {"pages": ["a", "bb"]})
    [fetch] = claim(conn, [flow.slug])
    assert (fetch.step, fetch.attempt, fetch.inputs, fetch.item) == ("fetch", 1, {}, None)
    assert fetch.run_input == {"pages": ["a", "bb"]} and fetch.timeout == 60
    complete(conn, fetch, ["a", "bb"])
    tasks = {(t.step, t.index): t for t in claim(conn, [flow.slug])}
    assert set(tasks) == {("score", 0), ("score", 1), ("summarize", 0)}
    assert tasks[("summarize", 0)].inputs == {"fetch": ["a", "bb"]}
    assert (tasks[("score", 0)].item, tasks[("score", 1)].item) == ("a", "bb")
    keys = {t.key for t in tasks.values()}
    assert len(keys) == 3 and all(len(k) == 64 for k in keys)
    assert run_row(conn, run_id)["status"] == "running"


def test_start_run_is_idempotent_on_a_callers_run_id(conn):
    install(conn, diamond())
    first = start(conn, "diamond", {"n": 2}, run_id="order-42")
    again = start(conn, "diamond", {"n": 2}, run_id="order-42")
    assert first == again == "order-42"
    assert conn.execute("SELECT count(*) FROM charter.tasks").fetchone() == (1,)
    with pytest.raises(RunIdConflictError) as caught:
        start(conn, "diamond", {"n": 3}, run_id="order-42")
    assert "different input" in caught.value.message
    install(conn, two_leaves())
    with pytest.raises(RunIdConflictError, match="flow 'diamond', not 'two_leaves'"):
        start(conn, "two_leaves", {"x": 1}, run_id="order-42")


def test_concurrent_starts_with_one_run_id_make_one_run(db_url, conn):
    install(conn, diamond())
    results, errors = [], []

    def starter():
        try:
            with psycopg.connect(db_url, autocommit=True) as own:
                results.append(start(own, "diamond", {"n": 2}, run_id="same"))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=starter) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == ["same"] * 8
    assert conn.execute("SELECT count(*) FROM charter.runs").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM charter.tasks").fetchone() == (1,)


def test_starting_an_unknown_flow_or_bad_input_is_refused_and_writes_nothing(conn):
    with pytest.raises(FlowNotFoundError, match="charter deploy"):
        start(conn, "no_such_flow", {})
    root_map = flow_from_shape(
        "root_map",
        {
            "options": {},
            "steps": [{"slug": "each", "stepType": "map", "dependencies": [], "options": {}}],
        },
    )
    install(conn, root_map)
    with pytest.raises(RunInputError, match="must be a JSON array, not object"):
        start(conn, "root_map", {"not": "a list"})
    assert conn.execute("SELECT count(*) FROM charter.runs").fetchone() == (0,)


def test_a_run_stays_on_the_version_it_started_with(conn):
    from charter.ops.flows import deploy_flow

    install(conn, diamond())
    old_run = start(conn, "diamond", {"n": 1})
    changed = two_leaves()
    changed.slug = "diamond"
    deploy_flow(conn, changed)
    new_run = start(conn, "diamond", {"x": 1})
    versions = dict(conn.execute("SELECT id, version_id FROM charter.runs"))
    assert versions[old_run] != versions[new_run]
    old_flow = diamond()
    while tasks := claim(conn, ["diamond"]):
        for task in tasks:  # each run's tasks come from its own version's steps
            complete(conn, task, handle(old_flow if task.run_id == old_run else changed, task))
    assert run_row(conn, old_run)["output"] == {"total": {"sum": 0, "count": 1}}
    assert run_row(conn, new_run)["output"] == {"b": 2, "c": 10}


def test_map_results_aggregate_in_index_order_whatever_the_completion_order(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 5})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, [0, 1, 2, 3, 4])
    squares = sorted(
        (t for t in claim(conn, ["diamond"]) if t.step == "square"), key=lambda t: -t.index
    )
    for task in squares:  # complete in reverse order
        complete(conn, task, task.item * 100)
    inbox = conn.execute(
        "SELECT value FROM charter.inbox WHERE run_id = %s AND "
        "target_step = 'total' AND source_step = 'square'",
        (run_id,),
    ).fetchone()
    assert inbox == ([0, 100, 200, 300, 400],)


def test_an_empty_map_completes_at_once_with_an_empty_list(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 0})
    drain(conn, flow)
    assert run_row(conn, run_id)["output"] == {"total": {"sum": 0, "count": 0}}
    square = next(s for s in run_row(conn, run_id)["steps"] if s["slug"] == "square")
    assert (square["slug"], square["status"], square["tasks"]) == ("square", "completed", 0)
    assert evidence(conn, run_id, "square") == []


def test_a_root_map_fans_out_over_the_run_input(conn):
    flow = flow_from_shape(
        "root_map",
        {
            "options": {},
            "steps": [{"slug": "each", "stepType": "map", "dependencies": [], "options": {}}],
        },
    )
    install(conn, flow)
    run_id = start(conn, "root_map", ["x", "y", "z"])
    assert sorted(t.item for t in claim(conn, ["root_map"])) == ["x", "y", "z"]
    empty = start(conn, "root_map", [])
    assert run_row(conn, empty)["status"] == "completed"
    assert run_row(conn, empty)["output"] == {"each": []}
    assert run_row(conn, run_id)["status"] == "running"


def test_a_map_over_something_that_is_not_an_array_fails_the_run_clearly(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 1})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, {"oops": "an object"})
    run = run_row(conn, run_id)
    assert run["status"] == "failed"
    assert run["error"]["type"] == "MapSourceNotArray"
    assert "Step 'square' maps over an array" in run["error"]["message"]
    assert conn.execute(
        "SELECT count(*) FROM charter.tasks WHERE run_id = %s AND status IN ('queued', 'started')",
        (run_id,),
    ).fetchone() == (0,)
    live, computed = projections(conn, run_id)
    assert live == computed


def test_stale_and_duplicate_completions_change_nothing(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 2})
    [seed] = claim(conn, ["diamond"])
    import uuid

    assert complete(conn, seed, [0, 1], token=uuid.uuid4()) == "stale"
    assert complete(conn, seed, [0, 1]) == "completed"
    before = projections(conn, run_id)[0], evidence(conn, run_id)
    assert complete(conn, seed, [9, 9]) == "stale"  # duplicate delivery
    assert (projections(conn, run_id)[0], evidence(conn, run_id)) == before
    assert conn.execute(
        "SELECT count(*) FROM charter.tasks WHERE run_id = %s", (run_id,)
    ).fetchone() == (3,)  # 2 squares and count queued (seed completed): not doubled


def test_wf02_wf14_a_second_completion_is_stopped_by_the_receipt_before_any_effect(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 2})
    [seed] = claim(conn, ["diamond"])
    assert complete(conn, seed, [0, 1]) == "completed"
    # Simulate a second live delivery of the same task (a bug elsewhere, or an operator
    # queuing the completed task again): only the receipt stands between it and a double
    # effect.
    conn.execute(
        "INSERT INTO charter.tasks (id, run_id, workflow_slug, version_id, step_slug, status,"
        " attempts, max_attempts, available_at, delivery_token) OVERRIDING SYSTEM VALUE"
        " SELECT %s, id, workflow_slug, version_id, 'seed', 'started', 1, 3,"
        " now() + interval '1 minute', gen_random_uuid() FROM charter.runs WHERE id = %s",
        (seed.id, run_id),
    )
    token = conn.execute(
        "SELECT delivery_token FROM charter.tasks WHERE id = %s", (seed.id,)
    ).fetchone()[0]
    inbox_before = conn.execute("SELECT count(*) FROM charter.inbox").fetchone()
    assert complete(conn, seed, [7, 7, 7], token=token) == "stale"
    assert conn.execute("SELECT count(*) FROM charter.inbox").fetchone() == inbox_before
    assert [e for e in evidence(conn, run_id, "seed") if e[3] == "completed"] == [
        ("seed", 0, 1, "completed", True)
    ]


def test_wf01_branches_finishing_at_once_start_the_join_exactly_once(db_url, conn):
    flow = diamond()
    install(conn, flow)
    for attempt in range(5):
        run_id = start(conn, "diamond", {"n": 3})
        [seed] = claim(conn, ["diamond"])
        complete(conn, seed, [0, 1, 2])
        tasks = claim(conn, ["diamond"])
        barrier = threading.Barrier(len(tasks))

        def finish(task, barrier):
            with psycopg.connect(db_url, autocommit=True) as own:
                barrier.wait()
                complete(own, task, handle(flow, task))

        threads = [threading.Thread(target=finish, args=(t, barrier)) for t in tasks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        joins = conn.execute(
            "SELECT count(*) FROM charter.tasks WHERE run_id = %s AND step_slug = 'total'",
            (run_id,),
        ).fetchone()
        assert joins == (1,), f"attempt {attempt}: the join was queued {joins[0]} times"
        drain(conn, flow)
        assert run_row(conn, run_id)["output"] == {"total": {"sum": 5, "count": 3}}


def test_readiness_overflow_raises_and_rolls_back(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 1})
    [seed] = claim(conn, ["diamond"])
    conn.execute(
        "UPDATE charter.step_states SET arrivals = required WHERE run_id = %s AND "
        "step_slug = 'count'",
        (run_id,),
    )
    with pytest.raises(ReadinessOverflowError, match="step 'count'"):
        complete(conn, seed, [0])
    assert conn.execute(
        "SELECT status FROM charter.tasks WHERE id = %s", (seed.id,)
    ).fetchone() == ("started",)
    assert evidence(conn, run_id) == []


def test_a_failed_attempt_is_retried_with_exponential_backoff(conn):
    flow = flow_from_shape(
        "flaky",
        {
            "options": {"maxAttempts": 3, "baseDelay": 10},
            "steps": [{"slug": "only", "stepType": "single", "dependencies": [], "options": {}}],
        },
    )
    install(conn, flow)
    run_id = start(conn, "flaky", {})
    delays = []
    for _ in range(2):
        [task] = claim(conn, ["flaky"])
        assert fail(conn, task) == "retrying"
        delays.append(
            conn.execute(
                "SELECT extract(epoch FROM available_at - now()) FROM charter.tasks WHERE id = %s",
                (task.id,),
            ).fetchone()[0]
        )
        assert claim(conn, ["flaky"]) == []  # not before its time
        conn.execute("UPDATE charter.tasks SET available_at = now() WHERE id = %s", (task.id,))
    assert 7.5 <= delays[0] <= 12.5 and 15 <= delays[1] <= 25  # 10 s then 20 s, ±25%
    [task] = claim(conn, ["flaky"])
    assert task.attempt == 3
    assert fail(conn, task, "third strike") == "failed"
    run = run_row(conn, run_id)
    assert run["status"] == "failed"
    assert run["error"] == {
        "type": "Test",
        "message": "third strike",
        "step": "only",
        "taskIndex": 0,
        "attempt": 3,
    }
    assert [e[3:] for e in evidence(conn, run_id)] == [
        ("failed", False),
        ("failed", False),
        ("failed", True),
    ]


def test_a_permanent_failure_is_not_retried_and_cancels_the_other_tasks(conn):
    flow = diamond(max_attempts=5)
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 3})
    [seed] = claim(conn, ["diamond"])
    complete(conn, seed, [0, 1, 2])
    tasks = claim(conn, ["diamond"])
    square0 = next(t for t in tasks if (t.step, t.index) == ("square", 0))
    assert fail(conn, square0, "bad input", permanent=True) == "failed"
    assert conn.execute(
        "SELECT count(*) FROM charter.tasks WHERE run_id = %s AND status = 'cancelled'", (run_id,)
    ).fetchone() == (3,)
    others = [t for t in tasks if t is not square0]
    assert all(complete(conn, t, 1) == "stale" for t in others)
    assert _steps(conn, run_id)["square"] == "failed"
    assert _steps(conn, run_id)["count"] == "cancelled"


def test_an_expired_lease_returns_the_task_and_counts_the_attempt(conn):
    flow = diamond(max_attempts=2)
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 1})
    [first] = claim(conn, ["diamond"], lease=30, worker="crashed-worker")
    assert claim(conn, ["diamond"]) == []  # leased
    conn.execute(
        "UPDATE charter.tasks SET available_at = now() - interval '1 second' WHERE id = %s",
        (first.id,),
    )  # the lease ran out
    [second] = claim(conn, ["diamond"], worker="healthy-worker")
    assert (second.id, second.attempt) == (first.id, 2)
    assert second.token != first.token
    assert complete(conn, first, [0]) == "stale"  # the crashed worker's late result
    [lost] = conn.execute(
        "SELECT error FROM charter.step_executions WHERE run_id = %s", (run_id,)
    ).fetchone()
    assert lost["type"] == "LeaseExpired" and "crashed-worker" in lost["message"]
    # It keeps dying: with no attempts left, the run fails instead of looping forever.
    conn.execute(
        "UPDATE charter.tasks SET available_at = now() - interval '1 second' WHERE id = %s",
        (first.id,),
    )
    assert claim(conn, ["diamond"]) == []
    run = run_row(conn, run_id)
    assert run["status"] == "failed" and run["error"]["type"] == "LeaseExpired"


def test_heartbeats_extend_leases_and_report_lost_tasks(conn):
    flow = diamond()
    install(conn, flow)
    run_id = start(conn, "diamond", {"n": 1})
    [task] = claim(conn, ["diamond"], lease=5)
    held = conn.execute(
        "SELECT charter.extend_leases('w', %s, %s, 60)", ([task.id], [task.token])
    ).fetchone()[0]
    assert held == [task.id]
    left = conn.execute(
        "SELECT extract(epoch FROM available_at - now()) FROM charter.tasks WHERE id = %s",
        (task.id,),
    ).fetchone()[0]
    assert 55 < left <= 60
    conn.execute("SELECT charter.cancel_run(%s)", (run_id,))
    assert (
        conn.execute(
            "SELECT charter.extend_leases('w', %s, %s, 60)", ([task.id], [task.token])
        ).fetchone()[0]
        == []
    )


def test_group_completion_fences_each_task_and_shares_one_commit(conn):
    flow = diamond()
    install(conn, flow)
    runs = [start(conn, "diamond", {"n": 2}) for _ in range(3)]
    seeds = claim(conn, ["diamond"])
    import uuid

    outcomes = conn.execute(
        "SELECT * FROM charter.complete_tasks(%s, %s, %s)",
        (
            [s.id for s in seeds] + [seeds[0].id],
            [s.token for s in seeds] + [uuid.uuid4()],
            [Jsonb([0, 1])] * 4,
        ),
    ).fetchall()
    assert sorted(o[1] for o in outcomes) == ["completed", "completed", "completed", "stale"]
    for run_id in runs:
        assert _steps(conn, run_id)["seed"] == "completed"
        assert _steps(conn, run_id)["square"] == "ready"
