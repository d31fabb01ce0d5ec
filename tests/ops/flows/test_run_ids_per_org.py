"""A run is named by its org and its id (its key is (id, org_id), docs/architecture.md § 15):
two orgs may use the same run id, and each gets its own run — its own steps, map elements,
join, child run, evidence, cancel and retry — however the engine's statements interleave."""

import hashlib
import json
import time
from typing import Any

import psycopg
import pytest

from charter import Context, Flow
from charter.client.client import Client
from charter.errors import ArgumentError, RunNotFoundError
from charter.ops import runs as ops
from tests.flows_for_tests import analyze_site
from tests.integration.helpers import charter_env, run_charter
from tests.ops.flows.test_children import billing_flows
from tests.ops.flows.test_waits import payment_flow
from tests.workers import running_worker


def flaky() -> Flow:
    flow = Flow("flaky_per_org", max_attempts=1)

    @flow.step
    def check(run: dict[str, Any]) -> str:
        if run["fail"]:
            raise ValueError(f"{run['who']} asked to fail")
        return run["who"]

    return flow


def keys() -> Flow:
    flow = Flow("keys_per_org")

    @flow.step
    def key(ctx: Context) -> dict[str, str]:
        return {"org": ctx.org_id, "key": ctx.idempotency_key}

    return flow


def test_a_tasks_idempotency_key_differs_between_two_orgs_runs_of_one_id(db_url):
    flow = keys()
    with (
        running_worker(db_url, flow),
        Client(db_url) as default,
        Client(db_url, org_id="acme") as acme,
    ):
        for client in (default, acme):
            client.start(flow, None, run_id="same-id")
        mine = default.wait("same-id", timeout=30).output["key"]
        theirs = acme.wait("same-id", timeout=30).output["key"]
    # The default org's keys are what they always were; another org's name the org.
    assert mine == {"org": "default", "key": _sha256("same-id:key:0")}
    # No run id of one org spells another's key: the others hash a JSON array.
    assert theirs == {"org": "acme", "key": _sha256(json.dumps(["acme", "same-id", "key", 0]))}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_two_orgs_run_flows_under_the_same_run_ids_each_its_own(db_url):
    site, (billing, orders), bad = analyze_site(), billing_flows(), flaky()
    with (
        running_worker(db_url, site, billing, orders, bad, concurrency=4),
        Client(db_url, org_id="acme") as acme,
        Client(db_url, org_id="globex") as globex,
    ):
        # The same ids, other inputs: steps, a map, a join and a child run per org.
        for client, pages, lines in ((acme, ["a", "bb"], [1, 2]), (globex, ["ccc"], [10])):
            assert client.start(site, {"pages": pages}, run_id="site-1") == "site-1"
            assert client.start(orders, {"lines": lines}, run_id="order-1") == "order-1"
        assert acme.wait("site-1", timeout=30).output == {
            "report": {"summary": "2 pages", "total": 3.0}
        }
        assert globex.wait("site-1", timeout=30).output == {
            "report": {"summary": "1 pages", "total": 3.0}
        }
        assert acme.wait("order-1", timeout=30).output == {"receipt": "paid 3"}
        assert globex.wait("order-1", timeout=30).output == {"receipt": "paid 10"}
        # Each parent's child has the same id (derived from the parent's), in its own org.
        [acme_child] = acme.get_run("order-1").children
        [globex_child] = globex.get_run("order-1").children
        assert acme_child.run_id == globex_child.run_id
        assert acme.get_run(acme_child.run_id).input == {"amount": 3}
        assert globex.get_run(globex_child.run_id).input == {"amount": 10}

        # Starting an id again is idempotent per org, and another org's input is no conflict.
        assert acme.start(site, {"pages": ["a", "bb"]}, run_id="site-1") == "site-1"

        # Failed in both orgs; a retry resumes only the org's own run.
        acme.start(bad, {"fail": True, "who": "acme"}, run_id="flaky-1")
        globex.start(bad, {"fail": True, "who": "globex"}, run_id="flaky-1")
        assert acme.wait("flaky-1", timeout=30).error["message"] == "acme asked to fail"
        assert globex.wait("flaky-1", timeout=30).error["message"] == "globex asked to fail"
        assert acme.retry("flaky-1") == "running"
        assert globex.get_run("flaky-1").status == "failed"

        # Each org lists its own runs.
        assert {r.id for r in globex.list_runs(flow=site)} == {"site-1"}
        assert [r.input for r in globex.list_runs(flow=site)] == [{"pages": ["ccc"]}]

        # An operator who names the id alone is told which orgs use it.
        with pytest.raises(ArgumentError, match="used by several orgs \\(acme, globex\\)"):
            acme.store.perform(ops.cancel("site-1", None))

    # Cancelling one org's run leaves the other's running (no worker serves this flow now).
    with Client(db_url, org_id="acme") as acme, Client(db_url, org_id="globex") as globex:
        for client in (acme, globex):
            client.start(site, {"pages": ["x"]}, run_id="site-2")
        assert acme.cancel("site-2") == "cancelled"
        assert globex.get_run("site-2").status == "running"
    with Client(db_url, org_id="initech") as initech, pytest.raises(RunNotFoundError):
        initech.get_run("site-2")
    # The operator's command line: an id two orgs use needs --org.
    env = charter_env(CHARTER_DATABASE_URL=db_url)
    ambiguous = run_charter("runs", "cancel", "site-2", env=env)
    assert ambiguous.returncode != 0
    assert "used by several orgs (acme, globex)" in ambiguous.stderr
    named = run_charter("runs", "cancel", "--org", "globex", "site-2", env=env)
    assert named.returncode == 0, named.stderr
    assert "site-2: cancelled" in named.stdout
    shown = run_charter("status", "--org", "globex", "--json", "site-2", env=env)
    assert '"status": "cancelled"' in shown.stdout, shown.stderr

    with psycopg.connect(db_url) as conn:
        evidence = dict(
            conn.execute(
                "SELECT org_id, count(*) FROM charter.step_executions WHERE run_id = 'site-1' "
                "AND status = 'completed' GROUP BY org_id"
            ).fetchall()
        )
        leftovers = conn.execute(
            "SELECT count(*) FROM charter.tasks WHERE run_id IN ('site-1', 'order-1')"
        ).fetchone()
    # fetch, summarize, report and one score per page: 2 pages for acme, 1 for globex.
    assert evidence == {"acme": 5, "globex": 4}
    assert leftovers == (0,)


def test_an_event_reaches_only_its_own_orgs_run_of_a_shared_run_id(db_url):
    """Both orgs' runs of one id wait for an event of the same key: each org's event wakes
    its own run only, with its own payload."""
    flow = payment_flow()
    with (
        running_worker(db_url, flow),
        Client(db_url, org_id="acme") as acme,
        Client(db_url, org_id="globex") as globex,
    ):
        for client in (acme, globex):
            client.start(flow, {"order_id": "42"}, run_id="order-42")
        deadline = time.monotonic() + 20
        while any(c.get_run("order-42").step("payment").status != "ready" for c in (acme, globex)):
            assert time.monotonic() < deadline, "the runs never reached their wait"
            time.sleep(0.05)
        assert acme.events.send("payment:42", {"amount": 7}).matched == 1
        assert acme.wait("order-42", timeout=20).output == {"ship": "shipped after 7"}
        assert globex.get_run("order-42").status == "running"  # still waiting for its own
        assert globex.events.send("payment:42", {"amount": 9}).matched == 1
        assert globex.wait("order-42", timeout=20).output == {"ship": "shipped after 9"}
