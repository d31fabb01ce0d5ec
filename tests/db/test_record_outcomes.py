"""record_outcomes: a worker's group of completions and failures locks its runs in one order.

Two workers each recording one completion and one failure of the same two runs, in
opposite orders, used to deadlock (completions were recorded first, then failures, each
sorted on its own). One call that sorts the whole group makes the second wait instead.
"""

import threading
import time

import psycopg
from psycopg.types.json import Jsonb

from charter import Flow

from ..engine import claim, install, start


def _record(conn, items):
    return conn.execute(
        "SELECT task_id, outcome FROM charter.record_outcomes(%s, %s, %s::jsonb[], %s::jsonb[],"
        " %s, 'test-worker', %s::numeric[])",
        (
            [t.id for t, _ in items],
            [t.token for t, _ in items],
            [None if failed else Jsonb(1) for _, failed in items],
            [Jsonb({"type": "Test", "message": "x"}) if failed else None for _, failed in items],
            [False for _ in items],
            [0 for _ in items],
        ),
    ).fetchall()


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
