"""start_runs starts a batch set-based when the flow's first steps are plain steps: the rows
it writes are the rows start_run writes one run at a time, and a taken id is handled as
start_run handles it."""

from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter import Flow
from tests.engine import install

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def diamond(slug: str) -> Flow:
    flow = Flow(slug, priority=3)

    @flow.step(max_attempts=5)
    def left(run: dict[str, object]) -> int:
        return 1

    @flow.step(start_delay=0)
    def right(run: dict[str, object]) -> int:
        return 2

    @flow.step(depends_on=[left, right])
    def join(left: int, right: int) -> int:
        return left + right

    return flow


def rows(conn, run_id: str) -> tuple[Any, Any, Any]:
    states = conn.execute(
        "SELECT step_slug, status, required, arrivals, initial_tasks, remaining_tasks, "
        "       ready_at IS NOT NULL, org_id FROM charter.step_states "
        " WHERE run_id = %s ORDER BY step_slug",
        (run_id,),
    ).fetchall()
    tasks = conn.execute(
        "SELECT step_slug, task_index, status, attempts, max_attempts, priority, org_id, "
        "       workflow_slug, version_id FROM charter.tasks WHERE run_id = %s ORDER BY step_slug",
        (run_id,),
    ).fetchall()
    run = conn.execute(
        "SELECT status, input, priority, org_id, version_id FROM charter.runs WHERE id = %s",
        (run_id,),
    ).fetchone()
    return run, states, tasks


def test_a_batch_writes_what_one_run_at_a_time_writes(conn):
    install(conn, diamond("batched_diamond"))
    one = conn.execute(
        "SELECT charter.start_run('batched_diamond', %s, 'single-1', 'default', NULL, 7)->>'runId'",
        (Jsonb({"n": 1}),),
    ).fetchone()[0]
    ids = conn.execute(
        "SELECT charter.start_runs('batched_diamond', %s, ARRAY['batch-1', 'batch-2'], "
        "'default', NULL, 7)",
        (Jsonb([{"n": 1}, {"n": 2}]),),
    ).fetchone()[0]
    assert ids == ["batch-1", "batch-2"]
    assert rows(conn, ids[0]) == rows(conn, one)
    run, _states, tasks = rows(conn, ids[1])
    assert run[1] == {"n": 2}
    assert [t[0] for t in tasks] == ["left", "right"]
    assert [(t[4], t[5]) for t in tasks] == [(5, 7), (3, 7)]  # max attempts, priority
    assert conn.execute(
        "SELECT charter.run_projection(%s) = charter.compute_run_projection(%s)", (ids[1], ids[1])
    ).fetchone()[0]


def test_generated_ids_and_the_flow_priority_when_none_is_given(conn):
    install(conn, diamond("batched_ids"))
    ids = conn.execute(
        "SELECT charter.start_runs('batched_ids', %s)", (Jsonb([1, 2, 3]),)
    ).fetchone()[0]
    assert len(set(ids)) == 3
    priorities = conn.execute(
        "SELECT DISTINCT priority FROM charter.tasks WHERE run_id = ANY (%s)", (ids,)
    ).fetchall()
    assert priorities == [(3,)]


def test_a_taken_id_returns_the_same_run_or_says_why_not(conn):
    install(conn, diamond("batched_taken"))
    conn.execute(
        "SELECT charter.start_runs('batched_taken', %s, ARRAY['taken-a'])", (Jsonb(["a"]),)
    )
    again = conn.execute(
        "SELECT charter.start_runs('batched_taken', %s, ARRAY['taken-a', 'taken-b'])",
        (Jsonb(["a", "b"]),),
    ).fetchone()[0]
    assert again == ["taken-a", "taken-b"]
    inputs = conn.execute(
        "SELECT id, input FROM charter.runs WHERE id IN ('taken-a', 'taken-b') ORDER BY id"
    ).fetchall()
    assert inputs == [("taken-a", "a"), ("taken-b", "b")]  # each its own input on this path too
    assert (
        conn.execute("SELECT count(*) FROM charter.tasks WHERE run_id = 'taken-a'").fetchone()[0]
        == 2
    )  # not queued twice

    with (
        pytest.raises(psycopg.DatabaseError, match="already exists with a different input"),
        conn.transaction(),
    ):
        conn.execute(
            "SELECT charter.start_runs('batched_taken', %s, ARRAY['taken-c', 'taken-a'])",
            (Jsonb(["c", "not a"]),),
        )
    # The whole batch rolled back: taken-c was not started either.
    assert conn.execute("SELECT count(*) FROM charter.runs WHERE id = 'taken-c'").fetchone()[0] == 0


def test_the_same_id_twice_in_one_batch_is_one_run_or_a_conflict(conn):
    install(conn, diamond("batched_twice"))
    ids = conn.execute(
        "SELECT charter.start_runs('batched_twice', %s, ARRAY['twice', 'twice'])",
        (Jsonb(["x", "x"]),),
    ).fetchone()[0]
    assert ids == ["twice", "twice"]
    assert conn.execute("SELECT count(*) FROM charter.runs WHERE id = 'twice'").fetchone()[0] == 1
    with pytest.raises(psycopg.DatabaseError, match="different input"), conn.transaction():
        conn.execute(
            "SELECT charter.start_runs('batched_twice', %s, ARRAY['twice-2', 'twice-2'])",
            (Jsonb(["x", "y"]),),
        )


def test_bad_inputs_and_ids_are_refused_before_anything_is_written(conn):
    install(conn, diamond("batched_bad"))
    deep: object = 1
    for _ in range(102):
        deep = [deep]
    with (
        pytest.raises(psycopg.DatabaseError, match="more than 100 levels deep"),
        conn.transaction(),
    ):
        conn.execute(
            "SELECT charter.start_runs('batched_bad', %s, ARRAY['bad-1', 'bad-2'])",
            (Jsonb([1, deep]),),
        )
    with pytest.raises(psycopg.DatabaseError, match="1 to 200 characters"), conn.transaction():
        conn.execute(
            "SELECT charter.start_runs('batched_bad', %s, ARRAY['ok', %s])",
            (Jsonb([1, 2]), "x" * 201),
        )
    assert (
        conn.execute(
            "SELECT count(*) FROM charter.runs WHERE workflow_slug = 'batched_bad'"
        ).fetchone()[0]
        == 0
    )


def test_a_large_batch_pairs_each_id_with_its_own_input(conn):
    install(conn, diamond("batched_large"))
    given = [f"large-{n}" if n % 3 else None for n in range(3000)]
    ids = conn.execute(
        "SELECT charter.start_runs('batched_large', %s, %s::text[])",
        (Jsonb([{"n": n} for n in range(3000)]), given),
    ).fetchone()[0]
    assert len(ids) == len(set(ids)) == 3000
    assert [i for i, g in zip(ids, given, strict=True) if g is not None] == [
        g for g in given if g is not None
    ]  # a given id is kept where it was; None gets a fresh one
    inputs = dict(
        conn.execute(
            "SELECT id, (input->>'n')::integer FROM charter.runs WHERE id = ANY (%s)", (ids,)
        ).fetchall()
    )
    assert [inputs[i] for i in ids] == list(range(3000))
