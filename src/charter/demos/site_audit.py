"""`charter demo`: a real batch of runs with a map step, on in-process workers.

A site audit: ``crawl`` lists a site's pages, ``audit`` (a map, one task per page, async,
and flaky on purpose so retries show) scores each page, ``summarize`` and ``report`` fan in.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from charter.client.client import AsyncClient
from charter.db import connection
from charter.db.connection import DatabaseTarget
from charter.db.migrate import migrate
from charter.db.store import AsyncStore, Call
from charter.dsl.flow import Flow
from charter.ops.flows import deploy_flow
from charter.worker.runner import Worker, WorkerSettings

# Each attempt of an audit fails 5 % of the time; with 8 attempts no run fails (at 4, one
# audit in 160,000 spent them all, and about one demo in a hundred ended with a failed run).
site_audit = Flow("charter_demo_site_audit", max_attempts=8, base_delay=0, timeout=30)


@site_audit.step
def crawl(run: dict[str, Any]) -> list[str]:
    # Pages are named, never fetched: the audit scores each name.
    return [f"http://127.0.0.1/{run['site']}/page/{n}" for n in range(run["pages"])]


@site_audit.map(over=crawl)
async def audit(item: str) -> dict[str, Any]:
    await asyncio.sleep(random.uniform(0.001, 0.01))  # stands in for an HTTP call
    if random.random() < 0.05:
        raise ConnectionError(f"timed out fetching {item}")  # retried by charter
    return {"url": item, "score": sum(map(ord, item)) % 7 + 3}


@site_audit.step(depends_on=[audit])
def summarize(audit: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [page["score"] for page in audit]
    return {"pages": len(scores), "mean": round(sum(scores) / max(len(scores), 1), 2)}


@site_audit.step(depends_on=[crawl, summarize])
def report(run: dict[str, Any], crawl: list[str], summarize: dict[str, Any]) -> str:
    return f"{run['site']}: {len(crawl)} pages, mean score {summarize['mean']}"


def run_demo(target: DatabaseTarget, console: Console, *, runs: int = 200) -> int:
    return asyncio.run(_demo(target, console, runs))


async def _demo(target: DatabaseTarget, console: Console, runs: int) -> int:
    # Retried attempts are the point of the flaky step; the table counts them instead.
    logging.getLogger("charter.worker").setLevel(logging.ERROR)
    with connection.connect(target) as conn:
        migrate(conn)
        deployed = deploy_flow(conn, site_audit)
        version = conn.execute("SHOW server_version").fetchone()
    console.print(
        f"database: {target.display} ({target.source}), PostgreSQL "
        f"{version[0] if version else '?'}; flow '{site_audit.slug}' {deployed.status}"
    )
    batch = uuid.uuid4().hex[:8]
    settings = WorkerSettings(concurrency=32, lease_seconds=30, poll_interval=0.2)
    workers = [
        Worker([site_audit], target, settings, worker_id=f"demo-{batch}-{n}") for n in range(2)
    ]
    serving = [asyncio.create_task(w.serve()) for w in workers]
    started = time.monotonic()
    async with AsyncClient(target.url, migrate=False) as client:
        run_ids = await client.start_many(
            site_audit,
            [{"site": f"site{n}", "pages": random.randint(0, 12)} for n in range(runs)],
            [f"demo-{batch}-{n:04d}" for n in range(runs)],
        )
        await _watch(client.store, f"demo-{batch}-%", runs, console)
        elapsed = time.monotonic() - started
        for worker in workers:
            worker.stop()
        await asyncio.gather(*serving)
        sample = [await client.get_run(run_id) for run_id in run_ids[:3]]
        prefix = {"prefix": f"demo-{batch}-%"}
        rows = await client.store.execute(Call("demo_step_stats", prefix, list))
        counts = await client.store.execute(Call("demo_run_outcomes", prefix, list))
        outcome: dict[str, int] = dict(counts)
    _print_stats(console, rows, outcome, runs, elapsed)
    for run in sample:
        console.print(f"  {run.id}: {run.output['report'] if run.output else run.error}")
    return 0 if outcome.get("completed", 0) == runs else 1


async def _watch(store: AsyncStore, prefix: str, total: int, console: Console) -> None:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        bar = progress.add_task("runs finished", total=total)
        finished = 0
        while finished < total:
            await asyncio.sleep(0.1)
            counts = await store.execute(Call("demo_run_outcomes", {"prefix": prefix}, list))
            finished = sum(n for status, n in counts if status != "running")
            progress.update(bar, completed=finished)


def _print_stats(
    console: Console, rows: list[Any], outcome: dict[str, int], runs: int, elapsed: float
) -> None:
    steps_done = sum(row[1] for row in rows)
    console.print(
        f"{runs} runs in {elapsed:.2f}s: "
        + ", ".join(f"{count} {status}" for status, count in sorted(outcome.items()))
        + f"; {steps_done} step tasks ({steps_done / elapsed:.0f}/s)"
    )
    table = Table(title="per step", box=None)
    for column in ("step", "tasks done", "failed attempts", "mean ms", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right" if column != "step" else "left")
    for slug, done, failed, mean, p50, p95 in rows:
        table.add_row(slug, str(done), str(failed), f"{mean:.1f}", f"{p50:.1f}", f"{p95:.1f}")
    console.print(table)
