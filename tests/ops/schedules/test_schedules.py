"""Schedules: cron in SQL, exactly one fire per tick across workers, the missed-tick policy,
flows started and documents created or moved on schedule, bad input refused clearly."""

from __future__ import annotations

import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from charter import Flow
from charter.errors import ArgumentError, FlowNotFoundError, ScheduleInvalidError
from tests.engine import install
from tests.workers import running_worker

nightly = Flow("nightly_report")


@nightly.step
def report(run: dict[str, str]) -> str:
    return f"report for {run['team']}"


def _next(sql, cron, after, tz="UTC"):
    return sql("SELECT charter._cron_next(%s, %s, %s)", cron, after, tz)[0][0]


def test_cron_expressions_name_the_next_tick(sql):
    at = datetime(2026, 11, 23, 10, 7, 30, tzinfo=UTC)
    assert _next(sql, "*/15 * * * *", at) == datetime(2026, 11, 23, 10, 15, tzinfo=UTC)
    assert _next(sql, "0 6 1 * *", at) == datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    assert _next(sql, "0 9 * * mon-fri", datetime(2026, 11, 27, 10, tzinfo=UTC)) == datetime(
        2026, 11, 30, 9, 0, tzinfo=UTC
    )
    assert _next(sql, "@monthly", at, "Europe/Berlin") == datetime(2026, 11, 30, 23, tzinfo=UTC)
    # Both day fields restricted: either matches (the 1st, or a Sunday).
    assert _next(sql, "0 0 1 * 7", at) == datetime(2026, 11, 29, tzinfo=UTC)
    assert _next(sql, "0 0 29 2 *", at) == datetime(2028, 2, 29, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cron", "message"),
    [
        ("* * *", "needs five fields"),
        ("61 * * * *", "outside 0-59"),
        ("5-1 * * * *", "empty range"),
        ("x * * * *", "not a cron minute field"),
        ("0 0 31 2 *", "never fires"),
    ],
)
def test_a_bad_cron_expression_is_refused_naming_the_problem(acme, cron, message):
    with pytest.raises(ScheduleInvalidError, match=message):
        acme.schedules.put("bad", cron, entity_type="royalty_period", action="create")
    assert acme.schedules.list() == []


def test_bad_targets_are_refused(acme):
    with pytest.raises(ArgumentError, match="exactly one of flow= and entity_type="):
        acme.schedules.put("x", "@daily")
    with pytest.raises(FlowNotFoundError):
        acme.schedules.put("x", "@daily", flow="no_such_flow")
    with pytest.raises(ScheduleInvalidError, match="neither create nor a gate"):
        acme.schedules.put("x", "@daily", entity_type="royalty_period", action="explode")
    with pytest.raises(ScheduleInvalidError, match="not a time zone"):
        acme.schedules.put(
            "x", "@daily", entity_type="royalty_period", action="create", timezone="Mars/Olympus"
        )


def test_each_tick_fires_once_across_workers_and_missed_ticks_follow_the_policy(acme, db_url, sql):
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, nightly)
    every_minute = acme.schedules.put(
        "report", "* * * * *", flow=nightly, input={"team": "ops"}, missed="all"
    )
    latest = acme.schedules.put(
        "periods", "0 * * * *", entity_type="royalty_period", action="create",
        input={"franchisee": "F-1", "sales": 0, "anomalies": False},
    )  # fmt: skip
    assert every_minute.next_at > datetime.now(UTC)
    # Three hours pass with no worker: 180 minute ticks and 3 hourly ticks are missed.
    acme.test_clock.advance(timedelta(hours=3))
    count = "SELECT count(*) FROM charter.runs WHERE workflow_slug = 'nightly_report'"
    try:
        with ExitStack() as workers:
            for _ in range(3):
                workers.enter_context(running_worker(db_url, poll_interval=0.05))
            deadline = time.monotonic() + 20
            while sql(count)[0][0] < 180 and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        acme.test_clock.reset()
    [(runs,)] = sql("SELECT count(*) FROM charter.runs WHERE workflow_slug = 'nightly_report'")
    assert runs in (180, 181)  # every missed minute once (a new minute may have begun)
    ids = sql("SELECT id FROM charter.runs WHERE workflow_slug = 'nightly_report'")
    assert all(rid.startswith("acme:schedule:report:") for (rid,) in ids)
    created = sql("SELECT id FROM charter.documents WHERE entity_type = 'royalty_period'")
    assert len(created) == 1  # 'latest': one document for the latest missed hour
    [schedule] = [s for s in acme.schedules.list() if s.name == "periods"]
    assert schedule.last_result["documentId"] == created[0][0]
    assert latest.next_at <= schedule.last_tick_at < schedule.next_at


def test_a_poller_that_finds_due_schedules_taken_goes_on_to_the_next_ones(acme, db_url, sql):
    """Two pollers at once: the second one skips what the first holds and fires the rest.
    A yearly schedule, so no new tick falls due while the test runs (a minute's could)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, nightly)
    for n in range(30):
        acme.schedules.put(f"s{n:02d}", "0 0 1 1 *", flow=nightly, input={"team": f"t{n}"})
    acme.test_clock.advance(timedelta(days=367))
    try:
        with psycopg.connect(db_url) as first, psycopg.connect(db_url, autocommit=True) as second:
            taken = first.execute("SELECT charter.fire_due_schedules(20)").fetchone()[0]
            assert taken == 20  # its transaction still holds those twenty
            assert second.execute("SELECT charter.fire_due_schedules(20)").fetchone()[0] == 10
            first.commit()
            assert second.execute("SELECT charter.fire_due_schedules(20)").fetchone()[0] == 0
    finally:
        acme.test_clock.reset()
    [(runs,)] = sql("SELECT count(*) FROM charter.runs WHERE workflow_slug = 'nightly_report'")
    assert runs == 30
