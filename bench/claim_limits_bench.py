"""What priorities, concurrency keys and rate limits cost the claim when they do not bind.

    .venv/bin/python bench/claim_limits_bench.py [--tasks 20000] [--runs 4000]

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and the scratch
database `charter_bench` (dropped and made again). Two figures per variant of a 1-step
flow — plain, every run with a priority, a concurrency key (limit 10,000, 50 keys), a rate
limit (100,000/s):

- **claim rate**: N tasks queued, then `charter.claim_tasks` called from one connection,
  32 at a time, until none is left (claims only: nothing completes, so leases stay live);
- **runs/s**: N runs queued, then one `charter worker` (concurrency 32) runs them; from the
  first claim to the last completion, as the database recorded them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import psycopg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_flows  # noqa: E402
from bench import (  # noqa: E402
    _admin_url,
    _claim_to_completion_seconds,
    _fresh_database,
    _running,
    _workers,
)

from charter import migrate  # noqa: E402
from charter.db import connection  # noqa: E402
from charter.ops.flows import deploy_flow  # noqa: E402

VARIANTS = [  # label, flow, priority given at start
    ("plain", bench_flows.one_step, None),
    ("priority", bench_flows.one_step, "g %% 20"),
    ("concurrency key", bench_flows.keyed, None),
    ("rate limit", bench_flows.rated, None),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=4_000)
    args = parser.parse_args()
    url = _fresh_database(_admin_url())
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        for flow in {id(f): f for _, f, _ in VARIANTS}.values():
            deploy_flow(conn, flow)
        server = conn.execute("SHOW server_version").fetchone()[0]
    print(f"server: PostgreSQL {server} at {connection.redact(url)}; {os.cpu_count()} CPUs\n")
    print(f"{'variant':<18}{'claims/s':>10}{'runs/s':>9}")
    for label, flow, priority in VARIANTS:
        claims = _claim_rate(url, flow.slug, priority, args.tasks)
        runs = _runs_per_second(url, flow.slug, priority, args.runs)
        print(f"{label:<18}{claims:>10,.0f}{runs:>9,.0f}")
    return 0


def _queue(conn: psycopg.Connection, flow: str, priority: str | None, count: int) -> None:
    conn.execute("DELETE FROM charter.rate_buckets")
    conn.execute(
        "SELECT charter.start_run(%s, jsonb_build_object('n', g, 'k', g %% 50), NULL, "
        f"'default', NULL, {priority or 'NULL'}) FROM generate_series(1, %s) AS g",
        (flow, count),
    )
    conn.execute("VACUUM ANALYZE charter.tasks")


def _claim_rate(url: str, flow: str, priority: str | None, count: int) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        _queue(conn, flow, priority, count)
        versions = [conn.execute(
            "SELECT current_version_id FROM charter.workflows WHERE slug = %s", (flow,)
        ).fetchone()[0]]  # fmt: skip
        claimed, started = 0, time.perf_counter()
        while batch := conn.execute(
            "SELECT count(*) FROM charter.claim_tasks('bench', %s, 32, 600)", (versions,)
        ).fetchone()[0]:
            claimed += batch
        seconds = time.perf_counter() - started
        assert claimed == count, (claimed, count)
        _clear(conn, flow)
    return count / seconds


def _runs_per_second(url: str, flow: str, priority: str | None, count: int) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        _queue(conn, flow, priority, count)
        procs = _workers(url, 1, 32)
        try:
            while _running(conn, flow):
                time.sleep(0.2)
            seconds = _claim_to_completion_seconds(conn, flow)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(30)
        _clear(conn, flow)
    return count / float(seconds)


def _clear(conn: psycopg.Connection, flow: str) -> None:
    conn.execute("SELECT charter.delete_flow_and_data(%s)", (flow,))
    deploy_flow(conn, getattr(bench_flows, flow.removeprefix("bench_")))


if __name__ == "__main__":
    raise SystemExit(main())
