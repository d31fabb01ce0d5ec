"""Where the database's time goes per run: statements, rows, WAL and function time.

    .venv/bin/python bench/profile.py --url postgresql://postgres@127.0.0.1:5432/postgres \
        [--flow one_step|chain3|map10] [--runs 2000] [--workers 1] [--top 25]

Needs a server started with ``shared_preload_libraries = 'pg_stat_statements'`` (and, to see
the statements inside charter's functions, ``pg_stat_statements.track = all`` and
``track_functions = 'all'``). Makes a scratch database ``charter_profile`` on it, starts the
runs with ``Client.start_many`` and drains them with ``charter worker`` processes, then
prints, per run: the enqueue and the drain time, write transactions and WAL bytes, and the
statements and functions that took the most time (calls and rows per run beside them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
from psycopg import conninfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_flows  # noqa: E402

from charter import Client, migrate  # noqa: E402
from charter.ops.flows import deploy_flow  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="a database on the server to profile")
    parser.add_argument("--flow", default="one_step", choices=["one_step", "chain3", "map10"])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=0, help="0: the worker's default")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    url = _fresh_database(args.url)
    flow = getattr(bench_flows, args.flow)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        deploy_flow(conn, flow)
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        procs = _workers(url, args.workers, args.concurrency)
        _wait_registered(conn, len(procs))
        conn.execute("SELECT pg_stat_statements_reset(), pg_stat_reset()")
        xid0, lsn0 = conn.execute("SELECT txid_current(), pg_current_wal_lsn()").fetchone()
        cpu0 = _cpu_seconds(procs)
        t0 = time.perf_counter()
        with Client(url) as client:
            client.start_many(flow.slug, [{"i": i} for i in range(args.runs)])
        enqueued = time.perf_counter() - t0
        while conn.execute("SELECT count(*) FROM charter.runs WHERE status = 'running'").fetchone()[
            0
        ]:
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        workers_cpu, postgres_cpu = (b - a for a, b in zip(cpu0, _cpu_seconds(procs), strict=True))
        xid1, wal = conn.execute(
            "SELECT txid_current(), pg_current_wal_lsn() - %s::pg_lsn", (lsn0,)
        ).fetchone()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
        n = args.runs
        print(
            f"{flow.slug}: {n} runs, {args.workers} worker(s); enqueue {enqueued:.3f} s, "
            f"enqueue to last finished {wall:.3f} s = {n / wall:,.0f} runs/s; "
            f"{(xid1 - xid0 - 1) / n:.2f} write xacts and {wal / n / 1024:.1f} KiB WAL per run; "
            f"CPU per run: workers {workers_cpu / n * 1000:.3f} ms, "
            f"PostgreSQL {postgres_cpu / n * 1000:.3f} ms"
        )
        _statements(conn, n, args.top)
        _functions(conn, n, args.top)
    return 0


def _statements(conn: psycopg.Connection, runs: int, top: int) -> None:
    rows = conn.execute(
        "SELECT toplevel, calls, total_exec_time, rows, shared_blks_hit + shared_blks_read, "
        "       wal_bytes, regexp_replace(query, '\\s+', ' ', 'g') "
        "  FROM pg_stat_statements "
        " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        " ORDER BY total_exec_time DESC"
    ).fetchall()
    top_ms = sum(r[2] for r in rows if r[0])
    print(f"\ntop-level statements: {top_ms / runs * 1000:.0f} µs of execution per run")
    heads = ("µs/run", "calls/run", "rows/run", "blks/run", "WAL B/run")
    print(f"{heads[0]:>7} {heads[1]:>9} {heads[2]:>8} {heads[3]:>8} {heads[4]:>9}  statement")
    for toplevel, calls, ms, nrows, blocks, wal, query in rows[:top]:
        mark = "" if toplevel else "  · "
        print(
            f"{ms / runs * 1000:7.0f} {calls / runs:9.2f} {nrows / runs:8.2f} {blocks / runs:8.1f} "
            f"{float(wal) / runs:9.0f}  {mark}{query[:110]}"
        )


def _functions(conn: psycopg.Connection, runs: int, top: int) -> None:
    rows = conn.execute(
        "SELECT funcname, calls, self_time, total_time FROM pg_stat_user_functions "
        " WHERE schemaname = 'charter' ORDER BY self_time DESC LIMIT %s",
        (top,),
    ).fetchall()
    print(f"\n{'self µs/run':>11} {'total µs/run':>12} {'calls/run':>9}  function")
    for name, calls, self_ms, total_ms in rows:
        print(
            f"{self_ms / runs * 1000:11.0f} {total_ms / runs * 1000:12.0f} "
            f"{calls / runs:9.2f}  {name}"
        )


def _cpu_seconds(workers: list[subprocess.Popen[bytes]]) -> tuple[float, float]:
    """CPU seconds used so far by the worker processes (with their children) and by every
    PostgreSQL process of this machine."""
    worker_cpu = 0.0
    for proc in workers:
        try:
            times = psutil.Process(proc.pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        worker_cpu += times.user + times.system
    postgres_cpu = 0.0
    for proc in psutil.process_iter(["name", "cpu_times"]):
        if proc.info["name"] == "postgres" and proc.info["cpu_times"]:
            postgres_cpu += proc.info["cpu_times"].user + proc.info["cpu_times"].system
    return worker_cpu, postgres_cpu


def _fresh_database(admin_url: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS charter_profile WITH (FORCE)")
        admin.execute("CREATE DATABASE charter_profile")
    params = conninfo.conninfo_to_dict(admin_url)
    params["dbname"] = "charter_profile"
    return conninfo.make_conninfo("", **params)


def _workers(url: str, count: int, concurrency: int) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "CHARTER_DATABASE_URL": url, "PYTHONPATH": str(HERE)}
    extra = ["--concurrency", str(concurrency)] if concurrency else []
    return [
        subprocess.Popen(
            [sys.executable, "-m", "charter", "worker", "bench_flows", *extra],
            cwd=HERE,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]


def _wait_registered(conn: psycopg.Connection, count: int) -> None:
    deadline = time.monotonic() + 60
    while (
        conn.execute("SELECT count(*) FROM charter.workers WHERE stopped_at IS NULL").fetchone()[0]
        < count
    ):
        if time.monotonic() > deadline:
            raise SystemExit("the workers did not register within 60 s")
        time.sleep(0.05)
    time.sleep(0.5)


if __name__ == "__main__":
    raise SystemExit(main())
