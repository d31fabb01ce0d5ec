"""Two engines' pollers at once: the second one skips the waits whose documents the first
holds and resumes the ones after them, rather than finding the first ones taken and firing
nothing until the next round."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import psycopg

from tests import runtime_definitions as defs
from tests.workers import running_worker

FIRE = "SELECT charter.fire_due_waits(20, (SELECT array_agg(id) FROM charter.workflow_versions))"


def test_a_poller_that_finds_due_waits_taken_goes_on_to_the_next_ones(acme, db_url, sql):
    contract = defs.contract("loan", {"due": "string"})
    org = defs.org_definition("loan", [("until_due", "wait_timer", {"until": "entity.due"}),
                        ("remind", "script", {"expression": "true", "assignTo": "context.r"})],
               [("until_due", "remind", {})])  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    due = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    waiting = "SELECT count(*) FROM charter.instance_waits WHERE kind = 'timer'"
    with running_worker(db_url, poll_interval=0.05):
        for n in range(30):
            doc = acme.documents.create("loan", {"due": due}, actor="sales", id=f"loan-{n:02d}")
            acme.documents.transition(doc.id, "open", actor="sales")
        deadline = time.monotonic() + 30
        while sql(waiting)[0][0] < 30:
            assert time.monotonic() < deadline, "the timers never started"
            time.sleep(0.05)
    acme.test_clock.advance(timedelta(minutes=2))
    try:
        with psycopg.connect(db_url) as first, psycopg.connect(db_url, autocommit=True) as second:
            assert first.execute(FIRE).fetchone()[0] == 20  # its transaction holds their locks
            assert second.execute(FIRE).fetchone()[0] == 10
            first.commit()
            assert second.execute(FIRE).fetchone()[0] == 0
    finally:
        acme.test_clock.reset()
    assert sql(waiting) == [(0,)]
