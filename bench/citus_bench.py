"""charter on a Citus cluster beside one PostgreSQL server on the same machine, in one run.

    .venv/bin/python bench/citus_bench.py [--runs 2000] [--workers 2]

Needs the cluster of scripts/citus-cluster.sh (a coordinator and two workers on
127.0.0.1:9700-9702, PostgreSQL 15 with Citus 13) and a plain PostgreSQL (CHARTER_DATABASE_URL,
default the machine's at 127.0.0.1:5432). On each it makes a scratch database (on the
cluster: on every node, with the citus extension, the workers added and charter
distributed), starts the runs of a 1-step flow and of a 3-step chain in one org, and
times worker processes draining them: runs/s and steps/s from the first claim to the last
completion. On one machine the cluster shows no speed-up: its nodes share the same cores,
and every statement of the engine is planned on the coordinator and routed to a worker
node. The figures show what the coordinator costs, the baseline for a real cluster.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import psycopg
from psycopg import conninfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import bench_flows  # noqa: E402

from charter import migrate  # noqa: E402
from charter.db.citus import distribute  # noqa: E402
from charter.ops.flows import deploy_flow  # noqa: E402

FLOWS = [(bench_flows.one_step, 1), (bench_flows.chain3, 3)]
DATABASE = "charter_citus_bench"


def _on_database(url: str, name: str) -> str:
    return conninfo.make_conninfo("", **(conninfo.conninfo_to_dict(url) | {"dbname": name}))


def _cluster_database(coordinator: str) -> str:
    """A scratch database on every node of the cluster, charter migrated and distributed."""
    with psycopg.connect(coordinator, autocommit=True) as conn:
        nodes = conn.execute(
            "SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' "
            "ORDER BY groupid"
        ).fetchall()
    params = conninfo.conninfo_to_dict(coordinator)
    for host, port in nodes:
        node = conninfo.make_conninfo("", **(params | {"host": host, "port": str(port)}))
        with psycopg.connect(node, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {DATABASE}")
        with psycopg.connect(_on_database(node, DATABASE), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION citus")
    url = _on_database(coordinator, DATABASE)
    with psycopg.connect(url, autocommit=True) as conn:
        (host, port), workers = nodes[0], nodes[1:]
        conn.execute("SELECT citus_set_coordinator_host(%s, %s)", (host, port))
        for host, port in workers:
            conn.execute("SELECT citus_add_node(%s, %s)", (host, port))
    with psycopg.connect(url) as conn:
        migrate(conn)
    with psycopg.connect(url) as conn:
        distribute(conn)
    return url


def _drain(url: str, flow_slug: str, runs: int, workers: int) -> float:
    bench._start_runs(url, flow_slug, runs)
    procs = bench._workers(url, workers, 0)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            while bench._running(conn, flow_slug):
                time.sleep(0.2)
            return bench._claim_to_completion_seconds(conn, flow_slug)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per flow")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--cluster", default="postgresql://postgres@127.0.0.1:9700/charter",
        help="the coordinator (scripts/citus-cluster.sh url)",
    )  # fmt: skip
    args = parser.parse_args()
    single_admin = os.environ.get(
        "CHARTER_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
    )
    targets = {
        "one server": bench._fresh_database(single_admin, DATABASE),
        "Citus, 2 workers": _cluster_database(args.cluster),
    }
    print(f"{os.cpu_count()} CPUs; {args.runs} runs per flow, {args.workers} worker processes\n")
    print(f"{'where':<18}{'flow':<12}{'seconds':>9}{'runs/s':>9}{'steps/s':>9}")
    for where, url in targets.items():
        if where == "one server":
            with psycopg.connect(url, autocommit=True) as conn:
                migrate(conn)
        with psycopg.connect(url, autocommit=True) as conn:
            server = conn.execute("SHOW server_version").fetchone()[0]
            for flow, _ in FLOWS:
                deploy_flow(conn, flow)
        for flow, steps in FLOWS:
            seconds = _drain(url, flow.slug, args.runs, args.workers)
            print(
                f"{where:<18}{flow.slug.removeprefix('bench_'):<12}{seconds:>9.2f}"
                f"{args.runs / seconds:>9.0f}{args.runs * steps / seconds:>9.0f}"
                f"   (PostgreSQL {server})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
