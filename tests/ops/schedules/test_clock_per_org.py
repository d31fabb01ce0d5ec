"""The test clock is per org: moving one org's clock (a test, the documents demo) fires that
org's timers, escalations and schedules, and no other org's."""

from __future__ import annotations

import time
from datetime import timedelta

import psycopg
import pytest

from charter import Client
from tests import runtime_definitions as defs
from tests.workers import running_worker

FIRE = "SELECT charter.fire_due_waits(50, (SELECT array_agg(id) FROM charter.workflow_versions))"
WAITS = "SELECT kind FROM charter.instance_waits WHERE org_id = %s ORDER BY kind"


def _publish(client: Client) -> None:
    contract = defs.contract("leave", {"days": "number"})
    org = defs.org_definition(
        "leave",
        [("cool_off", "wait_timer", {"duration": "PT1H"}),
         ("ok", "approval", {"mode": "inline", "approvers": [{"managerOf": "requester"}],
                             "escalateAfter": "PT2H"})],
        [("cool_off", "ok", {})],
    )  # fmt: skip
    client.definitions.publish(contract)
    client.definitions.publish(contract, org)
    client.directory.put_user("boss", roles=[])
    client.directory.put_user("lead", roles=[], manager="boss")
    client.directory.put_user("dev", roles=[], manager="lead")


def _waiting_for(client: Client, org: str, kind: str, sql) -> str:
    doc = client.documents.create("leave", {"days": 3}, actor="dev")
    client.documents.transition(doc.id, "open", actor="dev")
    deadline = time.monotonic() + 30
    while sql(WAITS, org) != [(kind,)]:
        assert time.monotonic() < deadline, f"{org}'s instance never waited for {kind}"
        time.sleep(0.05)
    return doc.id


@pytest.fixture
def orgs(db_url, monkeypatch):
    monkeypatch.setenv("CHARTER_MODE", "development")
    with Client(db_url, org_id="acme") as acme, Client(db_url, org_id="globex") as globex:
        for client in (acme, globex):
            _publish(client)
        try:
            yield acme, globex
        finally:
            acme.test_clock.reset()
            globex.test_clock.reset()


def test_moving_one_orgs_clock_fires_its_timer_and_escalation_and_not_anothers(orgs, db_url, sql):
    acme, globex = orgs
    with running_worker(db_url, poll_interval=0.05):  # takes both to their timers
        _waiting_for(acme, "acme", "timer", sql)
        _waiting_for(globex, "globex", "timer", sql)
    acme.test_clock.advance(timedelta(hours=1, minutes=1))
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert conn.execute(FIRE).fetchone()[0] == 1  # acme's timer, not globex's
    assert sql(WAITS, "acme") == [("approval",)]
    assert sql(WAITS, "globex") == [("timer",)]

    acme.test_clock.advance(timedelta(hours=2, minutes=1))  # past acme's escalateAfter
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert conn.execute(FIRE).fetchone()[0] == 1  # acme's escalation
        assert conn.execute(FIRE).fetchone()[0] == 0
    [escalated] = acme.approvals.inbox("boss")
    assert escalated.escalated_at is not None
    assert sql(WAITS, "globex") == [("timer",)]
    assert globex.approvals.inbox("boss") == []

    # Each org's now is its own: acme's runs ahead, globex's is the server's.
    [(acme_now, globex_now, server)] = sql(
        "SELECT charter._now('acme'), charter._now('globex'), now()"
    )
    assert globex_now == server and acme_now - server >= timedelta(hours=3)


def test_schedules_tick_on_their_own_orgs_clock(orgs, sql):
    acme, globex = orgs
    for client in (acme, globex):
        client.schedules.put("nightly", "0 3 * * *", entity_type="leave", action="create",
                             input={"days": 1})  # fmt: skip
    acme.test_clock.advance(timedelta(days=1, hours=1))
    assert sql("SELECT charter.fire_due_schedules(20)") == [(1,)]
    docs = "SELECT count(*) FROM charter.documents WHERE org_id = %s AND entity_type = 'leave'"
    assert sql(docs, "acme") == [(1,)]
    assert sql(docs, "globex") == [(0,)]


def test_resetting_one_orgs_clock_leaves_anothers(orgs, sql):
    acme, globex = orgs
    acme.test_clock.advance(timedelta(days=2))
    globex.test_clock.advance(timedelta(days=5))
    acme.test_clock.reset()
    [(acme_now, globex_now, server)] = sql(
        "SELECT charter._now('acme'), charter._now('globex'), now()"
    )
    assert acme_now == server and globex_now - server >= timedelta(days=5)
