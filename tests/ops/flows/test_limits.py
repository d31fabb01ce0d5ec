"""Concurrency per key, rate limits and priorities, enforced by the claim across three real
worker processes. Timings are read from the evidence (claim and record times, on the
database's clock), so what is checked is what the claim allowed."""

from datetime import timedelta
from typing import Any

import psycopg
import pytest

from charter.client.client import Client
from tests.ops.flows.processes import deploy, wait_until_serving, workers, write_module

pytestmark = pytest.mark.slow

FLOWS = """
import time
from charter import Flow

per_customer = Flow("per_customer")

@per_customer.step(concurrency={"key": "run.customer", "limit": 2})
def work(run: dict) -> str:
    time.sleep(0.2)
    return run["customer"]

whole_flow = Flow("whole_flow", concurrency={"limit": 3})

@whole_flow.step
def first(run: dict) -> int:
    time.sleep(0.15)
    return run["n"]

@whole_flow.step(depends_on=[first])
def second(first: int) -> int:
    time.sleep(0.15)
    return first

per_customer_flow = Flow("per_customer_flow", concurrency={"key": "run.customer", "limit": 1})

@per_customer_flow.step
def draft(run: dict) -> str:
    time.sleep(0.1)
    return run["customer"]

@per_customer_flow.step(depends_on=[draft])
def send(draft: str) -> str:
    time.sleep(0.1)
    return draft

step_wide = Flow("step_wide")

@step_wide.step(concurrency={"limit": 2})
def capped(run: dict) -> int:
    time.sleep(0.2)
    return run["n"]

@step_wide.step
def free(run: dict) -> int:
    time.sleep(0.2)
    return run["n"]

quota = Flow("quota")

@quota.step(rate_limit={"key": "partner_api", "per_second": 5, "burst": 2})
def call(run: dict) -> int:
    return run["n"]

ranked = Flow("ranked")

@ranked.step
def job(run: dict) -> int:
    time.sleep(0.02)
    return run["n"]
"""


@pytest.fixture
def project(tmp_path, db_url):
    write_module(tmp_path, "limitflows", FLOWS)
    deploy(tmp_path, "limitflows", db_url)
    return tmp_path


def attempts(db_url: str, flow: str) -> list[tuple[Any, ...]]:
    """(run id, step, claimed at, recorded at, worker) of every completed attempt."""
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT e.run_id, e.step_slug, e.started_at, e.finished_at, e.worker_id, r.input "
            "FROM charter.step_executions AS e JOIN charter.runs AS r ON r.id = e.run_id "
            "WHERE r.workflow_slug = %s AND e.status = 'completed' ORDER BY e.started_at",
            (flow,),
        ).fetchall()


def most_at_once(intervals: list[tuple[Any, Any]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, change in events:  # an end sorts before a start at the same instant
        running += change
        peak = max(peak, running)
    return peak


def test_concurrency_per_key_holds_across_three_workers(project, db_url):
    customers = ["a"] * 10 + ["b"] * 10 + ["c"] * 4
    with workers(project, "limitflows", db_url, 3, "--concurrency", "8"), Client(db_url) as client:
        wait_until_serving(db_url, 3)
        run_ids = client.start_many("per_customer", [{"customer": c} for c in customers])
        runs = client.wait_many(run_ids, timeout=120)
    assert all(r.status == "completed" for r in runs)
    rows = attempts(db_url, "per_customer")
    assert len({row[4] for row in rows}) >= 2  # the work really was shared out
    for customer in "abc":
        mine = [(r[2], r[3]) for r in rows if r[5]["customer"] == customer]
        assert most_at_once(mine) <= 2
    # The limit is a limit, not a queue of one: two of a customer did run side by side,
    # and customers did not wait for each other.
    assert most_at_once([(r[2], r[3]) for r in rows if r[5]["customer"] == "a"]) == 2
    assert most_at_once([(r[2], r[3]) for r in rows]) > 2


def test_a_flow_wide_limit_holds_for_all_its_steps(project, db_url):
    with Client(db_url) as client:
        run_ids = client.start_many("whole_flow", [{"n": n} for n in range(12)])
    with workers(project, "limitflows", db_url, 3, "--concurrency", "8"), Client(db_url) as client:
        runs = client.wait_many(run_ids, timeout=120)
    assert [r.output for r in runs] == [{"second": n} for n in range(12)]
    assert most_at_once([(r[2], r[3]) for r in attempts(db_url, "whole_flow")]) == 3


def test_a_flow_wide_key_limits_all_steps_of_a_key_together(project, db_url):
    customers = ["a"] * 5 + ["b"] * 5
    with workers(project, "limitflows", db_url, 3, "--concurrency", "8"), Client(db_url) as client:
        wait_until_serving(db_url, 3)
        run_ids = client.start_many("per_customer_flow", [{"customer": c} for c in customers])
        runs = client.wait_many(run_ids, timeout=120)
    assert [r.output for r in runs] == [{"send": c} for c in customers]
    rows = attempts(db_url, "per_customer_flow")
    # One task of a customer at a time, whichever step it is; the two customers side by side.
    for customer in "ab":
        assert most_at_once([(r[2], r[3]) for r in rows if r[5]["customer"] == customer]) == 1
    assert most_at_once([(r[2], r[3]) for r in rows]) == 2


def test_a_step_wide_limit_caps_that_step_only(project, db_url):
    with Client(db_url) as client:
        run_ids = client.start_many("step_wide", [{"n": n} for n in range(10)])
    with workers(project, "limitflows", db_url, 3, "--concurrency", "8"), Client(db_url) as client:
        runs = client.wait_many(run_ids, timeout=120)
    assert all(r.status == "completed" for r in runs)
    rows = attempts(db_url, "step_wide")
    assert most_at_once([(r[2], r[3]) for r in rows if r[1] == "capped"]) == 2
    assert most_at_once([(r[2], r[3]) for r in rows if r[1] == "free"]) > 2


def test_a_rate_limit_is_one_bucket_for_all_workers_and_waiting_is_visible(project, db_url):
    with Client(db_url) as client:
        run_ids = client.start_many("quota", [{"n": n} for n in range(16)])
    with workers(project, "limitflows", db_url, 3, "--concurrency", "8"), Client(db_url) as client:
        waiting_seen = False
        while not waiting_seen and not all(client.get_run(r).done for r in run_ids):
            for run_id in run_ids:
                info = client.get_run(run_id).step("call").waiting_for
                if info and info["kind"] == "rateLimit" and info["key"] == "partner_api":
                    waiting_seen = True
        runs = client.wait_many(run_ids, timeout=120)
    assert waiting_seen
    assert all(r.status == "completed" for r in runs)
    assert all(r.step("call").attempts == 1 for r in runs)  # waited, never failed
    claims = sorted(r[2] for r in attempts(db_url, "quota"))
    # A token bucket of 5/s with a burst of 2: any window of T seconds holds at most
    # 2 + 5T claims (one more for the token being refilled at the window's edge).
    for i, start in enumerate(claims):
        for window in (0.5, 1.0, 2.0):
            inside = [c for c in claims[i:] if c - start <= timedelta(seconds=window)]
            assert len(inside) <= 2 + 5 * window + 1, (window, claims)
    assert (claims[-1] - claims[0]).total_seconds() >= (16 - 2) / 5 - 0.2


def test_higher_priority_runs_go_first_across_workers(project, db_url):
    with Client(db_url) as client:
        low = client.start_many("ranked", [{"n": n} for n in range(60)])
        high = client.start_many("ranked", [{"n": 100 + n} for n in range(6)], priority=10)
    with (
        workers(project, "limitflows", db_url, 3, "--concurrency", "1", "--batch-size", "1"),
        Client(db_url) as client,
    ):
        runs = client.wait_many(low + high, timeout=120)
    assert all(r.status == "completed" for r in runs)
    order = [r[0] for r in attempts(db_url, "ranked")]
    # Started after the whole backlog, the high ones were claimed among the first.
    assert max(order.index(r) for r in high) < 6 + 3 * 2, order
