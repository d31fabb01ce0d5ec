"""Child flows: a step whose body is a child run, ctx.start_child, the tree, cancelling it,
and a parent killed and retried that never starts a second child for the same key."""

import json
import signal
import time
from typing import Any

import psycopg

from charter import Flow
from charter.client.client import Client
from tests.integration.helpers import charter_env, run_charter
from tests.ops.flows.processes import deploy, workers, write_module
from tests.workers import running_worker


def billing_flows() -> tuple[Flow, Flow]:
    billing = Flow("billing")

    @billing.step
    def charge(run: dict[str, Any]) -> dict[str, Any]:
        if run["amount"] < 0:
            raise ValueError(f"cannot charge {run['amount']}")
        return {"charged": run["amount"]}

    orders = Flow("orders_with_billing", max_attempts=1)

    @orders.step
    def total(run: dict[str, Any]) -> int:
        return sum(run["lines"])

    @orders.step(depends_on=[total], child=billing)
    def pay(total: int) -> dict[str, Any]:
        return {"amount": total}  # the child's input

    @orders.step(depends_on=[pay])
    def receipt(pay: dict[str, Any]) -> str:
        return f"paid {pay['charge']['charged']}"

    return billing, orders


def test_a_child_step_completes_with_its_child_runs_output(db_url):
    billing, orders = billing_flows()
    with running_worker(db_url, billing, orders, concurrency=1), Client(db_url) as client:
        run_id = client.start(orders, {"lines": [2, 3]})
        run = client.wait(run_id, timeout=30)
        assert run.status == "completed", run.error
        assert run.output == {"receipt": "paid 5"}
        [child] = run.children
        assert (child.flow, child.status, child.step, child.key) == (
            "billing",
            "completed",
            "pay",
            "$body",
        )
        child_run = client.get_run(child.run_id)
        assert child_run.parent == {"runId": run_id, "step": "pay", "taskIndex": 0, "key": "$body"}
        assert child_run.input == {"amount": 5}
    # The parent's evidence: the handler's attempt started the child, then the step
    # completed with the child's output.
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT status, output FROM charter.step_executions "
            "WHERE run_id = %s AND step_slug = 'pay' ORDER BY id",
            (run_id,),
        ).fetchall()
    assert [r[0] for r in rows] == ["waiting", "completed"]
    assert rows[0][1]["childRunId"] == child.run_id
    assert rows[1][1] == {"charge": {"charged": 5}}


def test_a_child_step_fails_when_its_child_fails(db_url):
    billing, orders = billing_flows()
    with running_worker(db_url, billing, orders), Client(db_url) as client:
        run_id = client.start(orders, {"lines": [-4]})
        run = client.wait(run_id, timeout=30)
    assert run.status == "failed"
    assert run.error["type"] == "ChildRunFailed"
    assert "cannot charge -4" in run.error["message"]
    assert run.children[0].status == "failed"


def test_a_child_step_whose_flow_is_not_deployed_fails_with_the_reason(db_url):
    orders = Flow("orphan_parent", max_attempts=3)

    @orders.step(child="no_such_flow")
    def pay(run: Any) -> Any:
        return run

    with running_worker(db_url, orders), Client(db_url) as client:
        run = client.wait(client.start(orders, {"x": 1}), timeout=30)
    assert run.status == "failed"
    assert run.error["type"] == "ChildStartFailed"
    assert "no_such_flow" in run.error["message"]
    assert run.step("pay").attempts == 1  # permanent: retrying cannot deploy the flow


def test_cancelling_a_parent_cancels_its_children_and_status_shows_the_tree(db_url):
    child = Flow("waits_for_ever")

    @child.wait_event(key="never:{run.n}")
    def forever(): ...

    parent = Flow("spawner")

    @parent.step
    def spawn(run: dict[str, Any], ctx: Any) -> list[str]:
        started = [ctx.start_child(child, {"n": n}, key=f"n{n}") for n in range(2)]
        return [c.run_id for c in started]

    @parent.step(depends_on=[spawn], child=child)
    def also(spawn: list[str]) -> dict[str, Any]:
        return {"n": 99}

    with running_worker(db_url, child, parent), Client(db_url) as client:
        run_id = client.start(parent, {})
        deadline = time.monotonic() + 20
        while len(client.get_run(run_id).children) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        run = client.get_run(run_id)
        assert sorted(c.key for c in run.children) == ["$body", "n0", "n1"]
        # ctx.start_child's run ids are the ids the children got.
        assert run.step("spawn").output == [
            c.run_id for c in sorted(run.children, key=lambda c: c.key) if c.key != "$body"
        ]
        assert run.step("also").waiting_for["kind"] == "child"
        shown = run_charter(
            "status", run_id, env=charter_env(CHARTER_DATABASE_URL=db_url, COLUMNS="200")
        )
        assert shown.returncode == 0, shown.stderr
        assert "children (3)" in shown.stdout
        assert all(c.run_id in shown.stdout for c in run.children)
        assert "waiting for child run" in shown.stdout

        client.cancel(run_id)
        statuses = {c.key: client.get_run(c.run_id).status for c in client.get_run(run_id).children}
    assert statuses == {"$body": "cancelled", "n0": "cancelled", "n1": "cancelled"}


FLOWS = """
import json, os, time
from charter import Flow

MARKS = os.environ.get("CHARTER_TEST_MARKS", os.devnull)

child = Flow("kid")

@child.step
def hello(run: dict) -> str:
    return "hello " + run["name"]

parent = Flow("killed_parent", max_attempts=10, base_delay=0, timeout=30)

@parent.step
def spawn(run: dict, ctx) -> str:
    kid = ctx.start_child(child, {"name": run["name"]}, key="greeting")
    with open(MARKS, "a") as marks:
        marks.write(json.dumps({"attempt": ctx.attempt, "pid": os.getpid()}) + "\\n")
    time.sleep(float(os.environ.get("CHARTER_TEST_SLEEP", "1.5")))
    return kid.run_id

@parent.step(depends_on=[spawn], child=child)
def body(spawn: str, run: dict) -> dict:
    with open(MARKS, "a") as marks:
        marks.write(json.dumps({"body": True, "pid": os.getpid()}) + "\\n")
    time.sleep(float(os.environ.get("CHARTER_TEST_SLEEP", "1.5")))
    return {"name": run["name"] + " again"}
"""


def test_a_parent_killed_and_retried_never_starts_a_second_child_for_the_same_key(tmp_path, db_url):
    project = write_module(tmp_path, "killedparent", FLOWS)
    marks = tmp_path / "marks.jsonl"
    marks.touch()
    deploy(project, "killedparent", db_url)
    with Client(db_url) as client:
        run_ids = [client.start("killed_parent", {"name": f"p{i}"}) for i in range(3)]
    kills = 0
    env = {"CHARTER_TEST_MARKS": str(marks)}
    with workers(project, "killedparent", db_url, 2, "--lease-seconds", "2", **env) as procs:
        deadline = time.monotonic() + 90
        seen = 0
        while time.monotonic() < deadline and kills < 4:
            lines = marks.read_text().splitlines()
            if len(lines) > seen:
                # A handler is mid-attempt (child asked for, not yet recorded): kill its worker.
                pid = json.loads(lines[-1])["pid"]
                seen = len(lines)
                for i, proc in enumerate(procs):
                    if proc.pid == pid and proc.poll() is None:
                        proc.send_signal(signal.SIGKILL)
                        proc.wait()
                        kills += 1
                        procs[i] = _replacement(project, db_url, env)
            time.sleep(0.05)
        with Client(db_url) as client:
            runs = [client.wait(r, timeout=90) for r in run_ids]
    assert kills >= 2
    assert all(r.status == "completed" for r in runs), [r.error for r in runs]
    with psycopg.connect(db_url) as conn:
        children = conn.execute(
            "SELECT parent_run_id, child_key, count(*) FROM charter.runs "
            "WHERE parent_run_id = ANY (%s) GROUP BY 1, 2",
            (run_ids,),
        ).fetchall()
    assert sorted((key, count) for _, key, count in children) == [
        ("$body", 1),
        ("$body", 1),
        ("$body", 1),
        ("greeting", 1),
        ("greeting", 1),
        ("greeting", 1),
    ]
    for run in runs:
        by_key = {c.key: c for c in run.children}
        assert run.step("spawn").output == by_key["greeting"].run_id
        assert run.output == {"body": {"hello": f"hello {run.input['name']} again"}}


def _replacement(project, db_url, env):
    from tests.ops.flows.processes import start_worker

    return start_worker(project, "killedparent", db_url, "--lease-seconds", "2", **env)


def test_retrying_a_parent_retries_its_failed_child(db_url):
    child = Flow("sometimes_fails", max_attempts=1)
    broken = {"yes": True}

    @child.step
    def attempt(run: dict[str, Any]) -> str:
        if broken["yes"]:
            raise ValueError("not yet")
        return f"done {run['n']}"

    parent = Flow("retries_its_child", max_attempts=1)

    @parent.step(child=child)
    def delegate(run: dict[str, Any]) -> dict[str, Any]:
        return {"n": run["n"]}

    with running_worker(db_url, child, parent), Client(db_url) as client:
        run_id = client.start(parent, {"n": 3})
        assert client.wait(run_id, timeout=20).status == "failed"
        [first] = client.get_run(run_id).children
        broken["yes"] = False
        client.retry(run_id)
        run = client.wait(run_id, timeout=20)
        assert run.status == "completed", run.error
        assert run.output == {"delegate": {"attempt": "done 3"}}
        assert [c.run_id for c in run.children] == [first.run_id]  # the same child, resumed
