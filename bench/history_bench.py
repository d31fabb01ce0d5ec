"""Is charter as fast with a long history as on an empty database?

    .venv/bin/python bench/history_bench.py [--steps 10000000] [--runs 3000] [--rounds 3]

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database `charter_history` on it. Measures steps/s of the 3-step chain (N runs queued, then
drained by `charter worker` processes; the window is from the first claim to the last
completion, as the database recorded them) on the empty database; then seeds a history of
finished chain runs with SQL — every row the engine keeps for one (the run, its readiness
rows, receipts, evidence and inbox rows) — until it holds --steps
recorded steps, vacuums, and measures the same workload again. Each side is measured
--rounds times (one round varies by a quarter on a noisy machine); prints every round, the
medians and their ratio (the goal: within 10 %).
"""

from __future__ import annotations

import argparse
import statistics
import time

import bench_flows
import psycopg
from bench import (
    _admin_url,
    _fresh_database,
    _peak_mb,
    _running,
    _workers,
)

from charter import Client, migrate
from charter.ops.flows import deploy_flow

CHUNK = 250_000  # runs seeded per statement group


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000_000, help="recorded steps to seed")
    parser.add_argument("--runs", type=int, default=3000, help="chain runs per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each side")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    url = _fresh_database(_admin_url(), "charter_history")
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        deploy_flow(conn, bench_flows.chain3)
        server = conn.execute("SHOW server_version").fetchone()[0]
    print(f"server: PostgreSQL {server}; 3-step chain, {args.runs} runs, {args.workers} worker(s)")

    empty = _rounds(url, args, "empty database")
    seeded = _seed(url, args.steps)
    after = _rounds(url, args, f"{seeded:,} steps of history")
    print(
        f"median: empty {empty:,.0f} steps/s, with {seeded:,} steps of history {after:,.0f} "
        f"steps/s ({after / empty:.0%} of empty)"
    )
    return 0


def _rounds(url: str, args: argparse.Namespace, label: str) -> float:
    """The median steps/s of --rounds measurements, each printed."""
    rates = []
    for n in range(1, args.rounds + 1):
        rates.append(_measure(url, args))
        print(f"{label}, round {n}: {rates[-1]:8,.0f} steps/s", flush=True)
    return statistics.median(rates)


def _measure(url: str, args: argparse.Namespace) -> float:
    flow = bench_flows.chain3.slug
    with Client(url, migrate=False) as client:
        client.start_many(flow, [{"n": n} for n in range(args.runs)])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE charter.tasks")
        since = conn.execute("SELECT now()").fetchone()[0]
    procs = _workers(url, args.workers, args.concurrency)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            while _running(conn, flow):
                time.sleep(0.2)
            seconds = conn.execute(
                "SELECT extract(epoch FROM max(e.finished_at) - min(e.started_at)) "
                "FROM charter.step_executions AS e WHERE e.created_at >= %s",
                (since,),
            ).fetchone()[0]
            peak = max(_peak_mb(p.pid) for p in procs)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
    print(f"  (peak worker memory {peak:.0f} MB)")
    return args.runs * 3 / float(seconds)


def _seed(url: str, steps: int) -> int:
    """Finished 3-step chain runs, written as the engine writes them, until `steps` steps."""
    runs = steps // 3
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        version = conn.execute(
            "SELECT current_version_id FROM charter.workflows WHERE slug = 'bench_chain3'"
        ).fetchone()[0]
        for start in range(0, runs, CHUNK):
            stop = min(start + CHUNK, runs)
            with conn.transaction():
                for statement in _SEED:
                    conn.execute(statement, {"start": start, "stop": stop - 1, "v": version})
            print(f"  seeded {stop * 3:,} steps ({time.perf_counter() - began:.0f} s)", flush=True)
        conn.execute("VACUUM ANALYZE")
    print(f"  seeding and VACUUM took {time.perf_counter() - began:.0f} s")
    return runs * 3


# One chunk of history: run ids 'h-<n>', finished an hour ago, each with the rows the engine
# writes for a completed 3-step chain (first -> second -> third; the run's output is third's).
_STEPS = "(VALUES ('first', 0), ('second', 1), ('third', 2)) AS s(slug, i)"
_SEED = [
    """INSERT INTO charter.runs (id, workflow_slug, version_id, status, input, output,
                                created_at, finished_at, updated_at)
       SELECT 'h-' || n, 'bench_chain3', %(v)s, 'completed', jsonb_build_object('n', n),
              '{"third": 3}', now() - interval '1 hour', now() - interval '1 hour', now()
         FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n""",
    f"""INSERT INTO charter.step_states (run_id, step_slug, status, required, arrivals,
                                        initial_tasks, remaining_tasks, ready_at, completed_at)
        SELECT 'h-' || n, s.slug, 'completed', least(s.i, 1), least(s.i, 1), 1, 0,
               now() - interval '1 hour', now() - interval '1 hour'
          FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n CROSS JOIN {_STEPS}
        UNION ALL
        SELECT 'h-' || n, '$end', 'completed', 1, 1, NULL, NULL, NULL, now() - interval '1 hour'
          FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n""",
    f"""INSERT INTO charter.step_receipts (run_id, idempotency_key, created_at)
        SELECT 'h-' || n, charter._idempotency_key('h-' || n, 'default', s.slug, 0),
               now() - interval '1 hour'
          FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n CROSS JOIN {_STEPS}""",
    f"""INSERT INTO charter.step_executions (created_at, run_id, step_slug, attempt, status,
                                            terminal, idempotency_key, worker_id, started_at,
                                            finished_at, output)
        SELECT now() - interval '1 hour', 'h-' || n, s.slug, 1, 'completed', true,
               charter._idempotency_key('h-' || n, 'default', s.slug, 0), 'seed',
               now() - interval '1 hour', now() - interval '1 hour', to_jsonb(s.i + 1)
          FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n CROSS JOIN {_STEPS}""",
    """INSERT INTO charter.inbox (run_id, target_step, source_step, value, created_at)
       SELECT 'h-' || n, e.target, e.source, e.value, now() - interval '1 hour'
         FROM generate_series(%(start)s::integer, %(stop)s::integer) AS n
        CROSS JOIN (VALUES ('second', 'first', '1'::jsonb), ('third', 'second', '2'::jsonb))
                   AS e(target, source, value)""",
]


if __name__ == "__main__":
    raise SystemExit(main())
