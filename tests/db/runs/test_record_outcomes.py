"""record_outcomes: a worker's group of completions and failures locks its runs in one order,
records plain completions set-based with the same result as one by one, and can claim the
next tasks in the same transaction.

Two workers each recording one completion and one failure of the same two runs, in
opposite orders, used to deadlock (completions were recorded first, then failures, each
sorted on its own). One call that sorts the whole group makes the second wait instead.
"""

import threading
import time
import uuid

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter import Flow
from tests.engine import claim, handle, install, start

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def _record(conn, items, orgs=None):
    """Records (task, failed) items; ``orgs`` names each task's org as a worker does (without
    it, record_outcomes looks the orgs up)."""
    return conn.execute(
        "SELECT task_id, outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[], %s::jsonb[],"
        " %s, 'test-worker', %s::numeric[], NULL, %s::text[])",
        (
            [t.id for t, _ in items],
            [t.token for t, _ in items],
            [None if failed else Jsonb(1) for _, failed in items],
            [Jsonb({"type": "Test", "message": "x"}) if failed else None for _, failed in items],
            [False for _ in items],
            [0 for _ in items],
            orgs,
        ),
    ).fetchall()


def test_a_task_is_named_by_its_id_and_its_org(conn):
    # A task's key is (id, org_id): claim_tasks returns the org, and an outcome or a lease
    # renewal that names another org finds no task, changes nothing and is stale.
    flow = Flow("named_by_org")
    flow.step(slug="only")(lambda run: 1)
    install(conn, flow)
    conn.execute("SELECT charter.start_run('named_by_org', '{}'::jsonb, 'run-of-acme', 'acme')")
    [task] = claim(conn, ["named_by_org"])
    assert task.org == "acme"

    assert [o for _, o in _record(conn, [(task, False)], orgs=["default"])] == ["stale"]
    assert [o for _, o in _record(conn, [(task, True)], orgs=["default"])] == ["stale"]
    held = conn.execute(
        "SELECT charter.extend_leases('test-worker', %s, %s, 60, %s)",
        ([task.id], [task.token], ["default"]),
    ).fetchone()[0]
    assert held == []
    row = conn.execute(
        "SELECT status, attempts FROM charter.tasks WHERE id = %s", (task.id,)
    ).fetchone()
    assert row == ("started", 1)
    assert conn.execute("SELECT count(*) FROM charter.step_executions").fetchone()[0] == 0

    held = conn.execute(
        "SELECT charter.extend_leases('test-worker', %s, %s, 60, %s)",
        ([task.id], [task.token], ["acme"]),
    ).fetchone()[0]
    assert held == [task.id]
    assert [o for _, o in _record(conn, [(task, False)], orgs=["acme"])] == ["completed"]
    run = conn.execute("SELECT status FROM charter.runs WHERE id = 'run-of-acme'").fetchone()
    assert run == ("completed",)


def test_crossing_groups_of_completions_and_failures_wait_instead_of_deadlocking(db_url):
    flow = Flow("pairs", max_attempts=3)
    flow.map(over="run", slug="each")(lambda item: item)
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        run_a, run_b = start(conn, "pairs", [1, 2], "run-a"), start(conn, "pairs", [1, 2], "run-b")
        tasks = {(t.run_id, t.index): t for t in claim(conn, ["pairs"])}
    first = [(tasks[(run_b, 0)], False), (tasks[(run_a, 0)], True)]
    second = [(tasks[(run_a, 1)], False), (tasks[(run_b, 1)], True)]
    holder = psycopg.connect(db_url)
    outcome: list[object] = []
    try:
        assert [o for _, o in _record(holder, first)] == ["retrying", "completed"]
        # The holder keeps both runs locked; the second group must wait for them.

        def second_group() -> None:
            with psycopg.connect(db_url, autocommit=True) as conn:
                conn.execute("SET deadlock_timeout = '100ms'")
                outcome.append(sorted(o for _, o in _record(conn, second)))

        thread = threading.Thread(target=second_group)
        thread.start()
        time.sleep(0.5)
        assert outcome == []  # waiting, not failed
        holder.commit()
        thread.join(10)
    finally:
        holder.close()
    assert outcome == [["completed", "retrying"]]


def _wide() -> Flow:
    """Two roots, a join, a map and a second leaf: most of what a group can hold at once."""
    flow = Flow("wide", max_attempts=3, base_delay=0)

    @flow.step
    def left(run: dict) -> int:  # type: ignore[type-arg]
        return run["n"]

    @flow.step
    def right(run: dict) -> int:  # type: ignore[type-arg]
        return run["n"] * 10

    @flow.step(depends_on=[left, right])
    def join(left: int, right: int) -> list[int]:
        return [left, right, left + right]

    @flow.map(over=join)
    def each(item: int) -> int:
        return item + 1

    @flow.step(depends_on=[left])
    def side(left: int) -> str:
        return f"side {left}"

    return flow


def _state(conn, run_id: str) -> dict[str, object]:
    """Everything a run's completion writes, without ids or times."""
    one = conn.execute
    return {
        "run": one(
            "SELECT status, output, usd_cost FROM charter.runs WHERE id = %s", (run_id,)
        ).fetchone(),
        "steps": one(
            "SELECT step_slug, status, arrivals, required, remaining_tasks FROM charter.step_states"
            " WHERE run_id = %s ORDER BY step_slug",
            (run_id,),
        ).fetchall(),
        "inbox": one(
            "SELECT target_step, source_step, spread_index, value FROM charter.inbox"
            " WHERE run_id = %s ORDER BY 1, 2, 3",
            (run_id,),
        ).fetchall(),
        "receipts": one(
            "SELECT count(*) FROM charter.step_receipts WHERE run_id = %s", (run_id,)
        ).fetchone(),
        "evidence": one(
            "SELECT step_slug, task_index, attempt, status, terminal, output, worker_id"
            " FROM charter.step_executions WHERE run_id = %s ORDER BY 1, 2, 3",
            (run_id,),
        ).fetchall(),
        "queue": one("SELECT count(*) FROM charter.tasks WHERE run_id = %s", (run_id,)).fetchone(),
    }


def _group(conn, tasks, flow):
    """Records every claimed task in one call: each completes with its handler's output and
    a cost of 0.25, except the first attempt of `side`, which fails."""
    items = [(t, t.step == "side" and t.attempt == 1) for t in tasks]
    return conn.execute(
        "SELECT task_id, outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[], %s::jsonb[],"
        " %s, 'test-worker', %s::numeric[])",
        (
            [t.id for t, _ in items],
            [t.token for t, _ in items],
            [None if failed else Jsonb(handle(flow, t)) for t, failed in items],
            [Jsonb({"type": "Test", "message": "x"}) if failed else None for t, failed in items],
            [False for _ in items],
            [0.25 for _ in items],
        ),
    ).fetchall()


def test_a_group_records_exactly_what_its_tasks_recorded_one_at_a_time_would(db_url):
    """The set-based path for plain completions and the per-task path (maps, failures) in
    one group: the same runs driven with groups and with groups of one end the same."""
    flow = _wide()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        grouped = [start(conn, "wide", {"n": n}) for n in range(4)]
        outcomes: list[str] = []
        while tasks := claim(conn, ["wide"]):
            outcomes += [o for _, o in _group(conn, tasks, flow)]
        single = [start(conn, "wide", {"n": n}) for n in range(4)]
        while tasks := claim(conn, ["wide"]):
            for task in tasks:
                _group(conn, [task], flow)
        assert sorted(set(outcomes)) == ["completed", "retrying"]
        for a, b in zip(grouped, single, strict=True):
            state = _state(conn, a)
            assert state == _state(conn, b)
            assert state["run"][0] == "completed"
            n = grouped.index(a)
            assert state["run"][1] == {"each": [n + 1, 10 * n + 1, 11 * n + 1], "side": f"side {n}"}
            # Four single steps and three elements, one receipt each; eight attempts paid
            # for, as side failed once.
            assert state["receipts"] == (7,)
            assert state["run"][2] == pytest.approx(0.25 * 8)
            assert state["queue"] == (0,)


def test_a_completion_sent_twice_in_one_group_is_recorded_once(db_url):
    flow = _wide()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        run_id = start(conn, "wide", {"n": 1})
        left, right = sorted(claim(conn, ["wide"]), key=lambda t: t.step)
        rows = conn.execute(
            "SELECT task_id, outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[],"
            " %s::jsonb[], %s, 'test-worker', %s::numeric[])",
            (
                [left.id, left.id, right.id, right.id],
                [left.token, left.token, uuid.uuid4(), right.token],
                [Jsonb(1), Jsonb(2), Jsonb(3), Jsonb(10)],
                [None] * 4,
                [False] * 4,
                [0] * 4,
            ),
        ).fetchall()
        assert [o for _, o in rows] == ["completed", "stale", "stale", "completed"]
        inbox = conn.execute(
            "SELECT target_step, source_step, value FROM charter.inbox WHERE run_id = %s"
            " ORDER BY 1, 2",
            (run_id,),
        ).fetchall()
        assert inbox == [("join", "left", 1), ("join", "right", 10), ("side", "left", 1)]
        ready = {t.step: t.inputs for t in claim(conn, ["wide"])}
        assert ready == {"join": {"left": 1, "right": 10}, "side": {"left": 1}}


def test_recording_and_claiming_in_one_call_hands_back_the_next_step_at_once(db_url):
    """A chain's next step is queued by its predecessor's completion and claimed in the same
    transaction; the claim takes only as many as asked."""
    flow = _wide()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)
        run_id = start(conn, "wide", {"n": 2})
        tasks = claim(conn, ["wide"])
        versions = [
            v for (v,) in conn.execute("SELECT id FROM charter.workflow_versions").fetchall()
        ]
        claimed = conn.execute(
            "SELECT step_slug, inputs FROM charter.record_outcomes_and_claim(%s, %s,"
            " %s::jsonb[], %s::jsonb[], %s, 'test-worker', %s::numeric[], NULL, %s, 1, 30)",
            (
                [t.id for t in tasks],
                [t.token for t in tasks],
                [Jsonb(handle(flow, t)) for t in tasks],
                [None for _ in tasks],
                [False for _ in tasks],
                [0 for _ in tasks],
                versions,
            ),
        ).fetchall()
        assert len(claimed) == 1
        assert claimed[0] in [("join", {"left": 2, "right": 20}), ("side", {"left": 2})]
        left = conn.execute(
            "SELECT step_slug FROM charter.tasks WHERE run_id = %s AND status = 'queued'",
            (run_id,),
        ).fetchall()
        assert len(left) == 1 and left[0][0] != claimed[0][0]
