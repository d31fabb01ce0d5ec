"""A run of a chain of plain steps (one step, or steps one after another) keeps no readiness
rows (step_states): a 1-step run's step is read off the run's status, a longer chain's steps
off its evidence. Whatever path it takes (started alone or in a batch, completed set-based
or one by one, failed, retried, cancelled), it reads as a run that kept them would: get_run
shows each step as it is, and the live projection equals the one derived from the facts
(WF-15). Every other shape keeps its rows."""

from typing import Any

import pytest
from psycopg.types.json import Jsonb

from charter import Client, Flow
from charter.db.sqlstate import charter_errors
from charter.errors import RunStateError
from tests.engine import claim, complete, drain, fail, install, projections, run_row, start
from tests.flows_for_tests import diamond, two_leaves

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


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


def chain(slug: str) -> Flow:
    flow = Flow(slug, max_attempts=1)

    @flow.step()
    def fetch(run: dict[str, Any]) -> int:
        return int(run["n"])

    @flow.step(depends_on=[fetch])
    def double(fetch: int) -> int:
        return fetch * 2

    @flow.step(depends_on=[double])
    def label(double: int) -> str:
        return f"got {double}"

    return flow


def statuses(conn, run_id: str) -> dict[str, str]:
    return {s["slug"]: s["status"] for s in run_row(conn, run_id)["steps"]}


def test_a_chain_moves_step_by_step_without_readiness_rows(conn):
    install(conn, chain("chain_steps"))
    run_id = start(conn, "chain_steps", {"n": 5})
    [batched] = conn.execute(
        "SELECT charter.start_runs('chain_steps', %s)", (Jsonb([{"n": 6}]),)
    ).fetchone()[0]
    for started in (run_id, batched):
        assert readiness_rows(conn, started) == 0
        assert statuses(conn, started) == {
            "fetch": "ready",
            "double": "waiting",
            "label": "waiting",
        }
        assert_projection_matches(conn, started)

    [fetch, _] = claim(conn, ["chain_steps"])
    assert record(conn, fetch, 5) == "completed"  # set-based: double is ready at once
    assert statuses(conn, run_id) == {"fetch": "completed", "double": "ready", "label": "waiting"}
    steps = {s["slug"]: s for s in run_row(conn, run_id)["steps"]}
    assert steps["fetch"]["output"] == 5 and steps["fetch"]["completedAt"] is not None
    assert steps["double"]["completedAt"] is None
    assert_projection_matches(conn, run_id)

    [double] = [t for t in claim(conn, ["chain_steps"]) if t.run_id == run_id]
    assert double.inputs == {"fetch": 5}
    assert complete(conn, double, 10) == "completed"  # one by one
    assert statuses(conn, run_id) == {"fetch": "completed", "double": "completed", "label": "ready"}
    [label] = [t for t in claim(conn, ["chain_steps"]) if t.run_id == run_id]
    assert record(conn, label, "got 10") == "completed"
    run = run_row(conn, run_id)
    assert (run["status"], run["output"]) == ("completed", {"label": "got 10"})
    assert set(statuses(conn, run_id).values()) == {"completed"}
    live = assert_projection_matches(conn, run_id)
    assert live["steps"]["$end"]["status"] == "completed"
    assert readiness_rows(conn, run_id) == 0


def test_a_chain_that_fails_half_way_is_retried_from_there_or_cancelled(conn):
    install(conn, chain("chain_retry"))
    run_id = start(conn, "chain_retry", {"n": 1})
    [fetch] = claim(conn, ["chain_retry"])
    record(conn, fetch, 1)
    [double] = claim(conn, ["chain_retry"])
    assert fail(conn, double, "flaky", permanent=True) == "failed"
    assert statuses(conn, run_id) == {"fetch": "completed", "double": "failed", "label": "waiting"}
    assert_projection_matches(conn, run_id)

    with charter_errors():
        assert conn.execute("SELECT charter.retry_run(%s)", (run_id,)).fetchone()[0] == "running"
    assert statuses(conn, run_id) == {"fetch": "completed", "double": "ready", "label": "waiting"}
    [again] = claim(conn, ["chain_retry"])
    assert (again.step, again.attempt, again.inputs) == ("double", 1, {"fetch": 1})
    assert record(conn, again, 2) == "completed"
    drain(conn, chain("chain_retry"), check=lambda c: assert_projection_matches(c, run_id))
    assert run_row(conn, run_id)["output"] == {"label": "got 2"}

    cancelled = start(conn, "chain_retry", {"n": 3})
    [fetch] = claim(conn, ["chain_retry"])
    record(conn, fetch, 3)
    conn.execute("SELECT charter.cancel_run(%s)", (cancelled,))
    assert statuses(conn, cancelled) == {
        "fetch": "completed",
        "double": "cancelled",
        "label": "waiting",
    }
    assert_projection_matches(conn, cancelled)
    assert claim(conn, ["chain_retry"]) == []


def test_joins_fan_outs_maps_and_waits_keep_their_rows(conn):
    install(conn, diamond())
    install(conn, two_leaves())
    mapped = Flow("one_map")

    @mapped.map(over="run")
    def each(item: int) -> int:
        return item

    install(conn, mapped)
    sleepy = Flow("one_sleep")
    sleepy.sleep("nap", seconds=60)
    install(conn, sleepy)
    assert readiness_rows(conn, start(conn, "diamond", {"n": 1})) == 5
    assert readiness_rows(conn, start(conn, "two_leaves", {"x": 1})) == 4
    assert readiness_rows(conn, start(conn, "one_map", [1, 2])) == 2
    assert readiness_rows(conn, start(conn, "one_sleep", {})) == 2


def _forget_evidence(conn, run_id: str) -> None:
    """What retention does to a run finished before its cutoff: its evidence goes (here by
    rows, as a dropped monthly partition would take them, past the append-only trigger that
    dropping a partition does not fire), its run row stays."""
    with conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute("DELETE FROM charter.step_executions WHERE run_id = %s", (run_id,))


def test_a_finished_chain_reads_the_same_once_retention_dropped_its_evidence(conn):
    install(conn, chain("chain_retained"))
    done = start(conn, "chain_retained", {"n": 1})
    cancelled = start(conn, "chain_retained", {"n": 2})
    [first, second] = claim(conn, ["chain_retained"])
    record(conn, first if first.run_id == done else second, 1)
    conn.execute("SELECT charter.cancel_run(%s)", (cancelled,))
    drain(conn, chain("chain_retained"))
    before = run_row(conn, done)
    assert before["status"] == "completed"
    _forget_evidence(conn, done)
    _forget_evidence(conn, cancelled)
    after = run_row(conn, done)
    assert [(s["slug"], s["status"]) for s in after["steps"]] == [
        ("fetch", "completed"),
        ("double", "completed"),
        ("label", "completed"),
    ]
    assert all(s["completedAt"] == after["finishedAt"] for s in after["steps"])
    assert (
        conn.execute("SELECT charter.run_graph('default', %s)", (done,)).fetchone()[0]["nodes"][
            "$end"
        ]["status"]
        == "completed"
    )
    # A cancelled chain's ready step stays cancelled (its completed one is forgotten with
    # its evidence).
    assert "ready" not in statuses(conn, cancelled).values()


def test_a_reported_invocation_of_a_chain_shows_no_steps_and_keeps_what_its_runner_says(db_url):
    with Client(db_url) as client:
        flow = chain("chain_reported")
        run_id = client.start(flow, {"n": 1})
        version = client.get_run(run_id).version_id
        reg = client.registry
        reg.create_invocation("reported-1", version_id=version)
        assert reg.update_invocation("reported-1", status="completed").status == "completed"
        assert client.get_run("reported-1").steps == []
        client.cancel(run_id)
        with pytest.raises(RunStateError, match="executed by charter"):
            reg.update_invocation(run_id, status="completed")


def _facts_from_steps(conn, version_id: str) -> tuple[bool, list[str], list[str], int]:
    """What a version's steps say, read from its steps and dependencies."""
    steps = dict(
        conn.execute(
            "SELECT slug, step_type FROM charter.flow_steps WHERE version_id = %s", (version_id,)
        ).fetchall()
    )
    deps = conn.execute(
        "SELECT step_slug, dep_slug FROM charter.flow_step_deps WHERE version_id = %s",
        (version_id,),
    ).fetchall()
    configs = conn.execute(
        "SELECT count(*) FROM charter.flow_steps WHERE version_id = %s AND config IS NOT NULL",
        (version_id,),
    ).fetchone()[0]
    needs = [step for step, _ in deps]
    given = [dep for _, dep in deps]
    chain = (
        all(kind == "single" for kind in steps.values())
        and configs == 0
        and len(deps) == len(steps) - 1
        and len(set(needs)) == len(needs)
        and len(set(given)) == len(given)
    )
    roots = sorted(slug for slug in steps if slug not in needs)
    return not chain, roots, [r for r in roots if steps[r] == "map"], len(steps)


def test_a_versions_facts_are_what_its_steps_say(conn):
    mapped = Flow("facts_map")

    @mapped.map(over="run")
    def each(item: int) -> int:
        return item

    sleepy = Flow("facts_sleep")
    sleepy.sleep("nap", seconds=60)
    for flow in (
        one_step("facts_one"),
        chain("facts_chain"),
        diamond(),
        two_leaves(),
        mapped,
        sleepy,
    ):
        install(conn, flow)
    rows = conn.execute(
        "SELECT v.workflow_slug, f.version_id, f.keeps_readiness, f.root_steps, f.map_roots,"
        " f.step_count FROM charter.flow_version_facts AS f"
        " JOIN charter.workflow_versions AS v ON v.id = f.version_id"
    ).fetchall()
    facts = {slug: (version, tuple(rest)) for slug, version, *rest in rows}
    for slug in ("facts_one", "facts_chain", "diamond", "two_leaves", "facts_map", "facts_sleep"):
        version, (keeps, roots, map_roots, count) = facts[slug]
        assert (keeps, roots, map_roots, count) == _facts_from_steps(conn, version), slug
    assert facts["facts_one"][1][0] is False and facts["facts_chain"][1][0] is False
    assert facts["facts_map"][1][2] == ["each"]


def test_a_chain_whose_first_step_is_limited_queues_it_with_its_limit(conn):
    limited = Flow("limited_first", max_attempts=2)

    @limited.step(concurrency={"key": "run.customer", "limit": 1}, priority=7)
    def only(run: dict[str, Any]) -> int:
        return 1

    plain = one_step("plain_first", max_attempts=4)
    install(conn, limited)
    install(conn, plain)
    limited_run = start(conn, "limited_first", {"customer": "c1"})
    plain_run = start(conn, "plain_first", {"n": 1})
    rows = {
        run: (limit_key, limit_max, priority, max_attempts)
        for run, limit_key, limit_max, priority, max_attempts in conn.execute(
            "SELECT run_id, limit_key, limit_max, priority, max_attempts FROM charter.tasks"
            " WHERE run_id = ANY(%s)",
            ([limited_run, plain_run],),
        ).fetchall()
    }
    assert rows[limited_run] == ("default/limited_first.only:c1", 1, 7, 2)
    assert rows[plain_run] == (None, None, 0, 4)
    # A plain step's options tuned in place apply to the next run's task.
    conn.execute(
        "UPDATE charter.flow_steps SET opt_max_attempts = 9 WHERE slug = 'only' AND version_id ="
        " (SELECT current_version_id FROM charter.workflows WHERE slug = 'plain_first')"
    )
    tuned = start(conn, "plain_first", {"n": 2})
    assert conn.execute(
        "SELECT max_attempts FROM charter.tasks WHERE run_id = %s", (tuned,)
    ).fetchone() == (9,)
