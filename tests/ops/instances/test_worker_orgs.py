"""A worker given its orgs (``charter worker --org``, ``WorkerSettings.orgs``) serves those
orgs only: their runs, and their schedules' ticks; another org's work waits for a worker
that serves it."""

from __future__ import annotations

import time
from datetime import timedelta

import psycopg
import pytest

from charter import Client, Flow
from charter.errors import ArgumentError
from charter.worker.runner import served_orgs
from tests.engine import install
from tests.workers import running_worker

greet = Flow("greet_per_org")


@greet.step
def hello(run: dict[str, str]) -> str:
    return f"hello {run['name']}"


def test_a_worker_given_its_orgs_serves_them_and_leaves_the_others(db_url, sql, monkeypatch):
    monkeypatch.setenv("CHARTER_MODE", "development")  # the test clock may move
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, greet)
    with Client(db_url, org_id="acme") as acme, Client(db_url, org_id="globex") as globex:
        mine = acme.start(greet, {"name": "acme"})
        theirs = globex.start(greet, {"name": "globex"})
        for client in (acme, globex):
            client.schedules.put("tick", "* * * * *", flow=greet, input={"name": "tick"})
        acme.test_clock.advance(timedelta(minutes=2))
        ticks = "SELECT count(*) FROM charter.runs WHERE org_id = %s AND id LIKE %s"
        try:
            with running_worker(db_url, greet, orgs=("acme",)):
                assert acme.wait(mine, timeout=20).output == {"hello": "hello acme"}
                deadline = time.monotonic() + 20
                while sql(ticks, "acme", "acme:schedule:%")[0][0] == 0:
                    assert time.monotonic() < deadline, "acme's schedule never fired"
                    time.sleep(0.05)
                time.sleep(0.5)  # a chance to take globex's work, were it to
                task = (
                    "SELECT status, attempts FROM charter.tasks WHERE org_id = %s AND run_id = %s"
                )
                assert sql(task, "globex", theirs) == [("queued", 0)]  # never claimed
                assert sql(ticks, "globex", "globex:schedule:%")[0][0] == 0
                assert [w.orgs for w in acme.workers()] == [["acme"]]  # charter workers shows it
            with running_worker(db_url, greet):  # every org
                assert globex.wait(theirs, timeout=20).output == {"hello": "hello globex"}
                assert [w.orgs for w in globex.workers()] == [None]
        finally:
            acme.test_clock.reset()


@pytest.mark.parametrize(
    ("orgs", "message"),
    [([""], "org id must be 1 to 200"), ("acme", "a list of org ids"), ([7], "must be a string")],
)
def test_bad_orgs_are_refused_before_a_worker_starts(orgs, message):
    with pytest.raises(ArgumentError, match=message):
        served_orgs(orgs)


def test_the_orgs_are_one_session_setting_in_a_stable_order():
    assert served_orgs(["globex", "acme", "acme"]) == {"charter.serve_orgs": '["acme", "globex"]'}
    assert served_orgs([]) == {}
