"""charter's throughput and latency next to pgbench on the same server, in one run.

    .venv/bin/python bench/bench.py [--quick]

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database `charter_bench` on it (dropped and made again). Prints runs/s and steps/s for a
1-step flow, a 3-step chain and a 10-way map + join with 1 and 2 worker processes, each
also as a share of pgbench's single-row UPDATE TPS (-c 4 -j 2) measured on the same server
just before; step-to-step latency (p50/p95) with an idle queue; the latency a caller sees
from client.start() to client.wait() returning a finished 1-step run (three rounds, each
with a fresh worker: the median of their p50s and of their p95s, since one round can fall
in a noisy stretch of a shared machine); and peak worker memory.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_flows  # noqa: E402

from charter import Client, migrate  # noqa: E402
from charter.db import connection, embedded  # noqa: E402
from charter.ops.flows import deploy_flow  # noqa: E402

SCENARIOS = [  # flow, steps per run, runs (full), runs (quick)
    (bench_flows.one_step, 1, 6000, 1500),
    (bench_flows.chain3, 3, 3000, 800),
    (bench_flows.map10, 12, 600, 150),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    parser.add_argument("--concurrency", type=int, default=0, help="0: the worker's default")
    args = parser.parse_args()
    admin_url = _admin_url()
    url = _fresh_database(admin_url)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        for flow, *_ in SCENARIOS:
            deploy_flow(conn, flow)
        server = conn.execute("SHOW server_version").fetchone()[0]
    print(f"server: PostgreSQL {server} at {connection.redact(url)}; {os.cpu_count()} CPUs")

    tps = _pgbench(url, seconds=5 if args.quick else 10)
    print(f"pgbench single-row UPDATE, -c 4 -j 2: {tps:,.0f} tps (the ceiling)\n")
    print(
        f"{'scenario':<16}{'workers':>8}{'runs':>7}{'seconds':>9}{'runs/s':>9}"
        f"{'steps/s':>9}{'% ceiling':>10}{'peak MB':>9}"
    )
    for flow, steps, full, quick in SCENARIOS:
        runs = quick if args.quick else full
        for workers in (1, 2):
            seconds, peak = _throughput(url, flow.slug, runs, workers, args.concurrency)
            steps_per_s = runs * steps / seconds
            print(
                f"{flow.slug.removeprefix('bench_'):<16}{workers:>8}{runs:>7}{seconds:>9.2f}"
                f"{runs / seconds:>9.0f}{steps_per_s:>9.0f}{100 * steps_per_s / tps:>9.1f}%"
                f"{peak:>9.0f}"
            )
    p50, p95 = _latency(url, samples=50 if args.quick else 200)
    print(f"\nstep-to-step latency, idle queue, 1 worker: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    rounds = [_start_to_finished(url, samples=50 if args.quick else 300) for _ in range(3)]
    p50s = sorted(p50 for p50, _ in rounds)
    print(
        f"start + wait of a 1-step run (Client, idle queue, 1 worker), three rounds: "
        f"p50 {statistics.median(p50s):.1f} ms (rounds {', '.join(f'{p:.1f}' for p in p50s)}), "
        f"p95 {statistics.median(p95 for _, p95 in rounds):.1f} ms"
    )
    return 0


def _admin_url() -> str:
    configured = os.environ.get("CHARTER_DATABASE_URL")
    if configured:
        return configured
    return embedded.ensure_running().url("postgres")


def _fresh_database(admin_url: str, name: str = "charter_bench") -> str:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    params = conninfo.conninfo_to_dict(admin_url)
    params["dbname"] = name
    return conninfo.make_conninfo("", **params)


def _pgbench(url: str, seconds: int, script: str | None = None) -> float:
    """TPS of pgbench with 4 clients: by default the single-row UPDATE (the ceiling),
    else ``script``."""
    if script is None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_counter")
            conn.execute("CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL)")
            conn.execute("INSERT INTO bench_counter SELECT g, 0 FROM generate_series(1, 1000) g")
        script = "\\set id random(1, 1000)\nUPDATE bench_counter SET n = n + 1 WHERE id = :id;\n"
    binary = embedded.bin_dir() / "pgbench"
    if not binary.exists():
        binary = Path(shutil.which("pgbench") or "pgbench")
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as file:
        file.write(script)
    try:
        out = subprocess.run(
            [str(binary), "-n", "-c", "4", "-j", "2", "-T", str(seconds), "-f", file.name, url],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(file.name)
    match = re.search(r"tps = ([\d.]+)", out)
    assert match, out
    return float(match.group(1))


def _start_runs(url: str, flow: str, runs: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT charter.start_run(%s, jsonb_build_object('n', g)) "
            "FROM generate_series(1, %s) AS g",
            (flow, runs),
        )
        conn.execute("VACUUM ANALYZE charter.tasks")


def _workers(
    url: str, count: int, concurrency: int, src: Path | None = None
) -> list[subprocess.Popen[bytes]]:
    """``count`` worker processes of the benchmark's flows; ``src``: charter's code from
    that folder instead of the installed one."""
    env = {
        **os.environ,
        "CHARTER_DATABASE_URL": url,
        "CHARTER_MODE": "production",
        "PYTHONPATH": os.pathsep.join([*([str(src)] if src else []), str(HERE)]),
    }
    return [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "charter",
                "worker",
                "bench_flows",
                *(["--concurrency", str(concurrency)] if concurrency else []),
                "--poll-interval",
                "0.5",
            ],
            cwd=HERE,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]


def _throughput(
    url: str, flow: str, runs: int, workers: int, concurrency: int
) -> tuple[float, float]:
    _start_runs(url, flow, runs)
    procs = _workers(url, workers, concurrency)
    peak = 0.0
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            while _running(conn, flow):
                peak = max(peak, *(_peak_mb(p.pid) for p in procs))
                time.sleep(0.2)
            peak = max(peak, *(_peak_mb(p.pid) for p in procs))
            seconds = _claim_to_completion_seconds(conn, flow)
            conn.execute("SELECT charter.delete_flow_and_data(%s)", (flow,))
            deploy_flow(conn, getattr(bench_flows, flow.removeprefix("bench_")))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
    return float(seconds), peak


def _running(conn: psycopg.Connection[Any], flow: str) -> int:
    """How many runs of ``flow`` are still running."""
    row = conn.execute(
        "SELECT count(*) FROM charter.runs WHERE workflow_slug = %s AND status = 'running'",
        (flow,),
    ).fetchone()
    return int(row[0]) if row else 0


def _claim_to_completion_seconds(conn: psycopg.Connection[Any], flow: str) -> float:
    """The window of ``flow``'s runs: from the first claim to the last completion, as the
    database saw it."""
    row = conn.execute(
        "SELECT extract(epoch FROM max(r.finished_at) - min(e.started_at)) "
        "FROM charter.runs r "
        "JOIN charter.step_executions e ON e.run_id = r.id AND e.org_id = r.org_id "
        "WHERE r.workflow_slug = %s",
        (flow,),
    ).fetchone()
    return float(row[0]) if row else 0.0


def _peak_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _latency(url: str, samples: int) -> tuple[float, float]:
    procs = _workers(url, 1, 8)
    gaps: list[float] = []
    try:
        time.sleep(2)  # let the worker start and go idle
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT charter.delete_flow_and_data('bench_chain3')")
            deploy_flow(conn, bench_flows.chain3)
            for _ in range(samples):
                run_id = conn.execute("SELECT charter.start_run('bench_chain3', '{}')").fetchone()[
                    0
                ]["runId"]
                while (
                    conn.execute(
                        "SELECT status FROM charter.runs WHERE id = %s", (run_id,)
                    ).fetchone()[0]
                    == "running"
                ):
                    time.sleep(0.002)
                rows = conn.execute(
                    "SELECT step_slug, started_at, finished_at FROM charter.step_executions "
                    "WHERE run_id = %s ORDER BY started_at",
                    (run_id,),
                ).fetchall()
                for (_, _, done), (_, began, _) in itertools.pairwise(rows):
                    gaps.append((began - done).total_seconds() * 1000)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)
    gaps.sort()
    return statistics.median(gaps), gaps[int(len(gaps) * 0.95) - 1]


def _start_to_finished(url: str, samples: int, src: Path | None = None) -> tuple[float, float]:
    """What a caller waits: client.start() of a 1-step run until client.wait() returns it
    finished, through the client's one listening connection (a worker of ``src``'s code,
    as _workers takes it)."""
    procs = _workers(url, 1, 8, src)
    took: list[float] = []
    try:
        with Client(url, migrate=False) as client:
            client.wait(client.start(bench_flows.one_step.slug, {}), timeout=60)  # warm up
            for _ in range(samples):
                began = time.perf_counter()
                run = client.wait(client.start(bench_flows.one_step.slug, {}), timeout=60)
                took.append((time.perf_counter() - began) * 1000)
                assert run.status == "completed"
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)
    took.sort()
    return statistics.median(took), took[int(len(took) * 0.95) - 1]


if __name__ == "__main__":
    sys.exit(main())
