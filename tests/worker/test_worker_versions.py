"""A rolling deploy: workers with different code run only the versions their code matches.

Reported: an old worker (v1) and a new one (v2 adds a step) ran each other's steps, and
runs pinned to v1 failed with StepNotInCode on the new worker.
"""

from __future__ import annotations

import time

import psycopg

from charter import Flow
from charter.client.client import Client
from charter.ops.flows import deploy_flow
from tests.workers import running_worker


def _v1() -> Flow:
    flow = Flow("rolling")
    a = flow.step(slug="a")(lambda run: run)
    flow.step(slug="b", depends_on=[a])(lambda a: f"v1 saw {a}")
    return flow


def _v2() -> Flow:
    flow = Flow("rolling")
    a = flow.step(slug="a")(lambda run: run)
    b = flow.step(slug="b", depends_on=[a])(lambda a: f"v2 saw {a}")
    flow.step(slug="c", depends_on=[b])(lambda b: b.upper())
    return flow


def test_each_run_is_executed_by_the_code_of_its_own_version(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        v1 = deploy_flow(conn, _v1()).version_id
        old_runs = [
            conn.execute("SELECT charter.start_run('rolling', %s)", (f"{n}",)).fetchone()[0]
            for n in range(10)
        ]
        v2 = deploy_flow(conn, _v2()).version_id
    with (
        running_worker(db_url, _v1(), install_flows=False) as old_worker,
        running_worker(db_url, _v2(), install_flows=False) as new_worker,
        Client(db_url) as client,
    ):
        assert old_worker.versions == [v1] and new_worker.versions == [v2]
        new_runs = [client.start("rolling", n) for n in range(10)]
        old = [client.wait(r["runId"], timeout=30) for r in old_runs]
        new = [client.wait(r, timeout=30) for r in new_runs]
    assert all(run.status == "completed" and run.version_id == v1 for run in old)
    assert all(run.status == "completed" and run.version_id == v2 for run in new)
    assert {run.output["b"] for run in old} == {f"v1 saw {n}" for n in range(10)}
    assert {run.output["c"] for run in new} == {f"V2 SAW {n}" for n in range(10)}
    with psycopg.connect(db_url) as conn:
        executed_by = dict(
            conn.execute(
                "SELECT r.version_id, array_agg(DISTINCT e.worker_id) "
                "FROM charter.step_executions e JOIN charter.runs r ON r.id = e.run_id "
                "GROUP BY r.version_id"
            ).fetchall()
        )
    assert executed_by == {v1: [old_worker.id], v2: [new_worker.id]}


def test_a_run_no_live_worker_can_serve_waits_visibly_and_runs_when_one_comes(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        deploy_flow(conn, _v1())
        pinned = conn.execute("SELECT charter.start_run('rolling', '7')").fetchone()[0]["runId"]
        deploy_flow(conn, _v2())
    with running_worker(db_url, _v2(), install_flows=False), Client(db_url) as client:
        time.sleep(1.0)  # several claim rounds of the v2 worker
        waiting = client.get_run(pinned)
        assert waiting.status == "running" and waiting.serving_workers == 0
        assert all(step.attempts == 0 for step in waiting.steps)
        with running_worker(db_url, _v1(), install_flows=False):
            done = client.wait(pinned, timeout=30)
    assert done.status == "completed" and done.output == {"b": "v1 saw 7"}


def test_a_worker_picks_up_a_later_version_with_its_shape(db_url):
    """A rollback publishes v3 with v1's shape: workers running v1's code serve it too."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        v1 = deploy_flow(conn, _v1()).version_id
    with (
        running_worker(db_url, _v1(), install_flows=False, lease_seconds=3) as worker,
        Client(db_url) as client,
    ):
        with psycopg.connect(db_url, autocommit=True) as conn:
            deploy_flow(conn, _v2())
            v3 = deploy_flow(conn, _v1()).version_id
        run_id = client.start("rolling", 1)  # pinned to v3
        run = client.wait(run_id, timeout=30)
        assert worker.versions == sorted([str(v1), str(v3)])
    assert run.status == "completed" and run.version_id == v3
