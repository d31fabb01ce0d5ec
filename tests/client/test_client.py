"""The Python client (sync and async) and the run/status commands."""

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

from charter.client.client import AsyncClient, Client
from charter.errors import (
    FlowNotFoundError,
    FlowShapeMismatchError,
    RunIdConflictError,
    RunInputError,
    RunNotFoundError,
    RunStateError,
    RunWaitTimeoutError,
)
from tests.flows_for_tests import diamond
from tests.integration.helpers import charter_env
from tests.workers import running_worker


def test_client_start_wait_get_and_list(db_url):
    flow = diamond()
    with running_worker(db_url, flow), Client(db_url) as client:
        run_id = client.start(flow, {"n": 3}, run_id="client-1")
        assert run_id == "client-1"
        run = client.wait(run_id, timeout=30)
        assert run.status == "completed" and run.done
        assert run.output == {"total": {"sum": 5, "count": 3}}
        assert run.step("square").tasks == 3 and run.step("square").duration_s is not None
        assert client.get_run(run_id) == run
        assert [r.id for r in client.list_runs(flow=flow, status="completed")] == ["client-1"]
        assert client.list_runs(flow="diamond", status="failed") == []
        assert client.start(flow, {"n": 3}, run_id="client-1") == "client-1"  # idempotent


def test_client_errors_are_clear(db_url):
    with Client(db_url) as client:
        with pytest.raises(FlowNotFoundError):
            client.start("not_a_flow", {})
        with pytest.raises(RunNotFoundError):
            client.get_run("missing")
        run_id = client.start(diamond(), {"n": 1}, run_id="taken")
        with pytest.raises(RunInputError, match="not JSON"):
            client.start("diamond", {"n": {1, 2}})
        with pytest.raises(RunInputError, match="replace NaN with null"):
            client.start("diamond", float("nan"))
        with pytest.raises(RunInputError, match="does not match what step 'seed'"):
            client.start(diamond(), [1, 2])  # seed takes a dict
        with pytest.raises(RunIdConflictError):
            client.start("diamond", {"n": 2}, run_id="taken")
        with pytest.raises(RunWaitTimeoutError) as caught:
            client.wait(run_id, timeout=0.5)  # no worker is running
        assert "No live worker runs the code of diamond v1" in caught.value.message
        with pytest.raises(RunStateError):
            client.retry(run_id)
        assert client.cancel(run_id) == "cancelled"
        assert client.get_run(run_id).status == "cancelled"


def test_a_client_reads_and_controls_only_its_own_orgs_runs(db_url):
    """A run is addressed by its org and its id: a client (and the HTTP API, which acts
    through one per org) names its org, so another org's run does not exist for it."""
    with Client(db_url, org_id="acme") as acme, Client(db_url, org_id="globex") as globex:
        run_id = acme.start(diamond(), {"n": 1}, run_id="acme-order-1")
        for call in (globex.get_run, globex.cancel, globex.retry, globex.wait):
            with pytest.raises(RunNotFoundError, match="in org 'globex'"):
                call(run_id)
        assert acme.get_run(run_id).status == "running"  # globex's calls changed nothing
        assert acme.cancel(run_id) == "cancelled"
        assert acme.get_run(run_id).status == "cancelled"


@pytest.mark.parametrize("local", [False, True], ids=["production", "local-supabase"])
def test_starting_with_a_changed_flow_object_is_refused_even_in_development(
    db_url, monkeypatch, local
):
    from charter.db.mode import KNOWN_LOCAL_SUPABASE_ANON_KEY

    if local:  # development mode for workers: the client still never deletes runs
        monkeypatch.setenv("SUPABASE_ANON_KEY", KNOWN_LOCAL_SUPABASE_ANON_KEY)
    with Client(db_url) as client:
        client.start(diamond(), {"n": 1})
        changed = diamond()
        changed.step(slug="extra", depends_on=["total"])(lambda total: total)
        with pytest.raises(FlowShapeMismatchError, match="Step 'extra' is in the code"):
            client.start(changed, {"n": 1})
        assert client.start("diamond", {"n": 1})  # by slug: the published version


def test_async_client_has_the_same_methods(db_url):
    flow = diamond()

    async def scenario():
        async with AsyncClient(db_url) as client:
            run_id = await client.start(flow, {"n": 2})
            run = await client.wait(run_id, timeout=30)
            listed = await client.list_runs(flow="diamond")
            other = await client.start("diamond", {"n": 1})
            cancelled = await client.cancel(other)
            with pytest.raises(RunStateError):
                await client.retry(other)
            return run, listed, cancelled, await client.get_run(other)

    with running_worker(db_url, flow):
        run, listed, cancelled, other = asyncio.run(scenario())
    assert run.output == {"total": {"sum": 1, "count": 2}}
    assert [r.id for r in listed] == [run.id]
    assert cancelled == "cancelled"
    assert other.status in ("cancelled", "completed")


FLOW_MODULE = """
from charter import Flow

flow = Flow("cli_flow")

@flow.step
def double(run: dict) -> int:
    return run["x"] * 2
"""


def test_charter_run_and_status_on_the_command_line(tmp_path, db_url):
    (tmp_path / "cliflows.py").write_text(textwrap.dedent(FLOW_MODULE))
    env = charter_env(CHARTER_DATABASE_URL=db_url)

    def charter(*args, timeout=60):
        return subprocess.run(
            [sys.executable, "-m", "charter", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    worker = subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "cliflows", "--poll-interval", "0.2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        waited = charter(
            "run", "cliflows:flow", "--input", '{"x": 21}', "--run-id", "cli-1", "--wait"
        )
        assert waited.returncode == 0, waited.stderr
        assert json.loads(waited.stdout) == {"double": 42}
        started = charter("run", "cliflows:", "--input", '{"x": 1}')  # a module of one flow
        assert started.returncode == 0 and len(started.stdout.strip()) == 36
        by_slug = charter("run", "cli_flow", "--input", '{"x": 2}', "--wait")  # imports nothing
        assert by_slug.returncode == 0 and json.loads(by_slug.stdout) == {"double": 4}
    finally:
        worker.terminate()
        worker.wait(30)
    status = charter("status", "cli-1")
    assert status.returncode == 0, status.stderr
    assert "completed" in status.stdout and "double" in status.stdout
    assert '"double": 42' in status.stdout
    as_json = json.loads(charter("status", "cli-1", "--json").stdout)
    assert as_json["status"] == "completed" and as_json["steps"][0]["attempts"] == 1
    bad = charter("run", "cliflows:flow", "--input", "{not json}")
    assert bad.returncode == 1 and "RUN_INPUT_INVALID" in bad.stderr
    missing = charter("status", "nope")
    assert missing.returncode == 1 and "RUN_NOT_FOUND" in missing.stderr
