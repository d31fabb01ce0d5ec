"""Steps that wait without holding a worker: sleep, wait_event, and handlers that ask to be
resumed later. Real worker, real PostgreSQL."""

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

import charter
from charter import Flow
from charter.client.client import Client
from charter.errors import FlowDefinitionError
from tests.workers import running_worker


def evidence(db_url: str, run_id: str) -> list[tuple[str, str, int]]:
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT step_slug, status, attempt FROM charter.step_executions "
            "WHERE run_id = %s ORDER BY created_at, id",
            (run_id,),
        ).fetchall()


def payment_flow(timeout: int | None = None) -> Flow:
    flow = Flow("orders_paid")

    @flow.step
    def place(run: dict[str, Any]) -> dict[str, Any]:
        return {"order": run["order_id"]}

    @flow.wait_event(key="payment:{run.order_id}", depends_on=[place], timeout=timeout)
    def payment(): ...

    @flow.step(depends_on=[payment])
    def ship(payment: dict[str, Any]) -> str:
        if charter.timed_out(payment):
            return "cancelled: no payment"
        return f"shipped after {payment['amount']}"

    return flow


def test_a_wait_event_step_resumes_with_the_event_payload_and_holds_no_worker(db_url):
    flow = payment_flow()
    with running_worker(db_url, flow, concurrency=1), Client(db_url) as client:
        waiting = client.start(flow, {"order_id": "A1"})
        other = client.start(flow, {"order_id": "B2"})
        time.sleep(1.0)
        # Both runs wait with one worker slot: waiting holds none.
        assert client.get_run(waiting).status == "running"
        sent = client.events.send("payment:B2", {"amount": 7}, event_id="evt-b2")
        assert sent.matched == 1
        assert client.wait(other, timeout=20).output == {"ship": "shipped after 7"}
        assert client.get_run(waiting).status == "running"
        duplicate = client.events.send("payment:B2", {"amount": 99}, event_id="evt-b2")
        assert duplicate.status == "duplicate"
        client.events.send("payment:A1", {"amount": 3})
        assert client.wait(waiting, timeout=20).output == {"ship": "shipped after 3"}
    steps = [row[:2] for row in evidence(db_url, other)]
    assert steps == [("place", "completed"), ("payment", "completed"), ("ship", "completed")]


def test_an_event_sent_before_the_wait_began_is_kept_and_taken(db_url):
    flow = payment_flow()
    with Client(db_url) as client:
        kept = client.events.send("payment:EARLY", {"amount": 5})
        assert kept.status == "kept"
    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow, {"order_id": "EARLY"})
        assert client.wait(run_id, timeout=20).output == {"ship": "shipped after 5"}
        # Taken once: a second run on the same key waits for a new event.
        second = client.start(flow, {"order_id": "EARLY"}, run_id="second")
        time.sleep(0.8)
        assert client.get_run(second).status == "running"
        client.events.send("payment:EARLY", {"amount": 6})
        assert client.wait(second, timeout=20).output == {"ship": "shipped after 6"}


def test_a_wait_that_times_out_gives_its_dependants_a_marker_they_can_test(db_url):
    flow = payment_flow(timeout=1)
    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow, {"order_id": "LATE"})
        run = client.wait(run_id, timeout=20)
        assert run.output == {"ship": "cancelled: no payment"}
        # An event after the timeout finds no one waiting: it is kept, not delivered.
        assert client.events.send("payment:LATE", {"amount": 1}).status == "kept"


def test_a_sleep_step_waits_its_time_without_a_worker(db_url):
    flow = Flow("naps")

    @flow.step
    def first() -> str:
        return "a"

    nap = flow.sleep("nap", seconds=2, depends_on=[first])

    @flow.step(depends_on=[nap])
    def after(nap: dict[str, Any]) -> str:
        return nap["wokeAt"]

    with running_worker(db_url, flow, concurrency=1), Client(db_url) as client:
        started = time.monotonic()
        run_ids = [client.start(flow) for _ in range(3)]
        runs = [client.wait(r, timeout=20) for r in run_ids]
        elapsed = time.monotonic() - started
    assert all(r.status == "completed" for r in runs)
    # Three sleeps of 2 s with one slot: they slept side by side, not one after another.
    assert 2 <= elapsed < 5.5


def test_a_sleep_until_a_time_from_the_run_input(db_url):
    flow = Flow("reminders")

    @flow.sleep(until="{run.remind_at}")
    def wait_for_it(): ...

    @flow.step(depends_on=[wait_for_it])
    def remind(run: dict[str, Any]) -> str:
        return f"reminded {run['who']}"

    soon = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    with running_worker(db_url, flow), Client(db_url) as client:
        ok = client.start(flow, {"who": "ann", "remind_at": soon})
        bad = client.start(flow, {"who": "bob", "remind_at": "next tuesday"})
        assert client.wait(ok, timeout=20).output == {"remind": "reminded ann"}
        failed = client.wait(bad, timeout=20)
    assert failed.status == "failed"
    assert failed.error["type"] == "SleepUntilInvalid"
    assert "next tuesday" in failed.error["message"]


def test_a_handler_that_reschedules_is_resumed_later_without_using_an_attempt(db_url):
    flow = Flow("polling", max_attempts=1)
    calls = []

    @flow.step
    def poll(ctx: charter.Context) -> object:
        calls.append(ctx.attempt)
        if len(calls) == 1:
            return charter.Reschedule(after=1)
        if len(calls) == 2:
            ctx.sleep_until(datetime.now(UTC) + timedelta(seconds=0.5))
        return {"polls": len(calls)}

    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow)
        run = client.wait(run_id, timeout=20)
    assert run.status == "completed", run.error
    assert run.output == {"poll": {"polls": 3}}
    assert calls == [1, 1, 1]  # max_attempts=1, and three calls: none counted as an attempt
    assert [row[1] for row in evidence(db_url, run_id)] == [
        "rescheduled",
        "rescheduled",
        "completed",
    ]


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda f: f.sleep("s"), "give seconds= (how long) or until="),
        (lambda f: f.sleep("s", seconds=-1), "seconds=-1 is out of range"),
        (lambda f: f.wait_event("w", key="k:{order.id}"), "'order' is not available here"),
        (lambda f: f.wait_event("w", key="k", timeout=0), "timeout=0 is out of range"),
    ],
)
def test_wait_steps_refuse_bad_definitions_with_the_reason(make, fragment):
    with pytest.raises(FlowDefinitionError) as caught:
        make(Flow("bad_waits"))
    assert fragment in caught.value.message


def test_a_wait_steps_function_takes_no_parameters():
    flow = Flow("bad_wait_fn")
    with pytest.raises(FlowDefinitionError) as caught:

        @flow.wait_event(key="k")
        def paid(event): ...

    assert "takes no parameters" in caught.value.message


def test_retrying_a_run_makes_its_cancelled_wait_wait_again(db_url):
    flow = Flow("retried_wait", max_attempts=1)
    broken = {"yes": True}

    @flow.step
    def flaky() -> str:
        if broken["yes"]:
            raise charter.NonRetryable("down for now")
        return "ok"

    @flow.wait_event(key="go:{run.id}", timeout=600)
    def go(): ...

    @flow.step(depends_on=[flaky, go])
    def done(flaky: str, go: Any) -> Any:
        return go

    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow, {"id": "r1"})
        assert client.wait(run_id, timeout=20).status == "failed"
        broken["yes"] = False
        client.retry(run_id)
        time.sleep(1.0)
        run = client.get_run(run_id)
        assert run.status == "running"
        assert run.step("go").waiting_for["kind"] == "event"  # waits again, no timeout marker
        client.events.send("go:r1", {"went": True})
        assert client.wait(run_id, timeout=20).output == {"done": {"went": True}}


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"concurrency": {"key": "customer_id", "limit": 2}}, "write 'run.customer_id'"),
        ({"concurrency": {"key": "run.c", "limit": 0}}, "concurrency limit 0 is out of range"),
        ({"concurrency": {"key": "run.c"}}, "concurrency= takes"),
        ({"rate_limit": {"key": "api", "per_second": 0}}, "per_second=0 is out of range"),
        ({"rate_limit": {"per_second": 5}}, "rate_limit= takes"),
        ({"rate_limit": {"key": "{other.x}", "per_second": 5}}, "'other' is not available"),
        ({"priority": 1001}, "priority=1001 is out of range"),
        ({"priority": True}, "priority=True is out of range"),
    ],
)
def test_limits_refuse_bad_options_with_the_reason(options, fragment):
    flow = Flow("bad_limits")
    with pytest.raises(FlowDefinitionError) as caught:

        @flow.step(**options)
        def work(run: Any) -> Any:
            return run

    assert fragment in caught.value.message
