"""The registry from async code, the `charter lineage` command, and costs reported by steps."""

import asyncio
import json
import subprocess
import sys

import psycopg

from charter import Flow
from charter.client.client import AsyncClient, Client
from tests.integration.helpers import charter_env
from tests.workers import running_worker


def test_the_async_registry_has_the_same_calls(db_url):
    async def scenario():
        async with AsyncClient(db_url) as client:
            reg = client.registry
            await reg.ensure_workflow("wf", "d")
            v1 = await reg.create_workflow_version("wf", {"a": 1}, "v1", "init")
            v2 = await reg.create_workflow_version(
                "wf", {"a": 2}, "v2", "mutation", parent_version_ids=[v1.version_id]
            )
            made = await reg.create_invocation("inv", v2.version_id, run_id="evo")
            done = await reg.update_invocation("inv", status="failed", usd_cost=0.5)
            return v1, await reg.lineage(v2.version_id), made, done

    v1, tree, made, done = asyncio.run(scenario())
    assert tree.ancestors() == [v1.version_id]
    assert [w.code for w in made.warnings] == ["EVOLUTION_GENERATION_MISSING"]
    assert (done.status, done.usd_cost) == ("failed", 0.5) and done.end_time is not None


def test_charter_lineage_prints_the_ancestry(db_url):
    with Client(db_url) as client:
        reg = client.registry
        reg.create_workflow_version("wf", {"g": 1}, "seed one", "init", version_id="p1")
        reg.create_workflow_version("wf", {"g": 2}, "seed two", "immigrant", version_id="p2")
        reg.create_workflow_version(
            "wf",
            {"g": 3},
            "the child",
            "crossover",
            version_id="kid",
            parent_version_ids=["p1", "p2"],
            generation_id="7",
        )
    env = charter_env(CHARTER_DATABASE_URL=db_url)
    shown = subprocess.run(
        [sys.executable, "-m", "charter", "lineage", "kid"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "kid" in lines[0] and "crossover" in lines[0] and "gen 7" in lines[0]
    assert any("p1" in line and "seed one" in line for line in lines[1:])
    as_json = json.loads(
        subprocess.run(
            [sys.executable, "-m", "charter", "lineage", "kid", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    assert [p["version_id"] for p in as_json["parents"]] == ["p1", "p2"]
    missing = subprocess.run(
        [sys.executable, "-m", "charter", "lineage", "nope"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and "VERSION_NOT_FOUND" in missing.stderr


def test_step_handlers_report_cost_and_the_run_adds_it_up(db_url):
    flow = Flow("priced", max_attempts=2, base_delay=0)

    @flow.map(over="run")
    def call_model(item: str, ctx) -> str:
        ctx.add_cost(0.25)
        if item == "flaky" and ctx.attempt == 1:
            raise TimeoutError("model timed out")  # the failed attempt still cost money
        return item.upper()

    with running_worker(db_url, flow), Client(db_url) as client:
        run = client.wait(client.start(flow, ["a", "b", "flaky"]), timeout=30)
    assert run.status == "completed"
    with psycopg.connect(db_url) as conn:
        cost = conn.execute(
            "SELECT usd_cost FROM charter.runs WHERE id = %s", (run.id,)
        ).fetchone()[0]
    assert float(cost) == 0.25 * 4


def test_add_cost_refuses_nonsense():
    import math

    import pytest

    from charter.worker.context import Context

    ctx = Context("r", "f", "s", 0, 1, "k", None)
    for bad in (-1, math.nan, math.inf, "3", True):
        with pytest.raises(ValueError, match="add_cost"):
            ctx.add_cost(bad)
    ctx.add_cost(1)
    ctx.add_cost(0.5)
    assert ctx.cost_usd == 1.5
