"""The performance goals, read off one run of the side-by-side peers harness.

    bench/peers.sh                                  # runs the harness, then this
    .venv/bin/python bench/peers_goals.py RAW_DIR   # RAW_DIR: the harness's raw/ folder

The harness (charter beside pgqueuer, procrastinate, DBOS and pgbench on one throwaway
PostgreSQL; see its README) writes one JSON line per run. This prints, from the medians of
one harness run, each goal beside the figure it is measured against: charter's 1-step
runs/s (enqueue included) against pgqueuer's no-op jobs/s with 1 and 2 worker processes;
the 3-step chain's steps/s against 0.30 x pgbench's single-row UPDATE TPS with 4 clients;
the 10,000-run backlog against the 2,000-run rate; and what each unit costs in CPU, write
transactions and WAL.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    raw = Path(sys.argv[1])
    runs = _medians(_lines(raw / "peers.jsonl"))
    pgbench = _pgbench(_lines(raw / "pgbench.jsonl"))

    def rate(peer: str, scenario: str, n: int, workers: int, unit: str) -> float | None:
        row = runs.get((peer, scenario, n, workers))
        return row["throughput"][unit] if row else None

    ceiling = pgbench.get(("update1", 4))
    print(f"pgbench single-row UPDATE, 4 clients: {_fmt(ceiling)} tps (the ceiling)\n")
    print(f"{'goal':<48} {'charter':>10} {'against':>10} {'ratio':>7}  met")
    for workers in (1, 2):
        _goal(
            f"1-step runs/s >= pgqueuer jobs/s, {workers} worker(s)",
            rate("charter", "noop", 2000, workers, "runs"),
            rate("pgqueuer", "noop", 2000, workers, "jobs"),
            1.0,
        )
    for workers in (1, 2):
        _goal(
            f"3-step chain steps/s >= 0.30 x pgbench, {workers} w",
            rate("charter", "chain3", 500, workers, "steps"),
            ceiling,
            0.30,
        )
    _goal(
        "10,000-run backlog >= 90 % of the 2,000-run rate",
        rate("charter", "noop", 10000, 1, "runs"),
        rate("charter", "noop", 2000, 1, "runs"),
        0.90,
    )
    print(f"\n{'cost per unit':<34} {'CPU ms (workers / PG)':>22} {'xacts':>6} {'WAL KiB':>8}")
    for key in sorted(runs):
        peer, scenario, n, workers = key
        if peer not in ("charter", "pgqueuer"):
            continue
        row = runs[key]
        units = next(iter(row["units"].values()))
        workers_ms = row["worker_cpu_s"] / units * 1000
        postgres_ms = row["postgres_cpu_s"] / units * 1000
        print(
            f"{peer} {scenario} n={n} w={workers:<14} {workers_ms:>9.2f} / {postgres_ms:<9.2f}"
            f" {row['write_xacts'] / units:>6.2f} {row['wal_bytes'] / units / 1024:>8.1f}"
        )
    return 0


def _goal(what: str, ours: float | None, against: float | None, factor: float) -> None:
    if ours is None or against is None:
        print(f"{what:<48} {_fmt(ours):>10} {_fmt(against):>10} {'':>7}  not measured")
        return
    ratio = ours / against
    print(f"{what:<48} {ours:>10,.0f} {against:>10,.0f} {ratio:>7.2f}  {ratio >= factor}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _medians(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int, int], dict[str, Any]]:
    """One row per (peer, scenario, n, workers) at the default per-worker limit: each number
    is the median over the successful repetitions."""
    groups: dict[tuple[str, str, int, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("ok") and row.get("concurrency") in (None, 0):
            groups[(row["peer"], row["scenario"], row["n"], row["workers"])].append(row)
    result = {}
    for key, group in groups.items():
        first = group[0]
        result[key] = {
            "units": first["units"],
            "throughput": {
                unit: statistics.median(r["throughput"][unit] for r in group)
                for unit in first["throughput"]
            },
            **{
                name: statistics.median(r[name] for r in group)
                for name in ("worker_cpu_s", "postgres_cpu_s", "write_xacts", "wal_bytes")
            },
        }
    return result


def _pgbench(rows: list[dict[str, Any]]) -> dict[tuple[str, int], float]:
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row in rows:
        if row.get("tps") is not None:
            groups[(row["scenario"], row["clients"])].append(row["tps"])
    return {key: statistics.median(values) for key, values in groups.items()}


if __name__ == "__main__":
    raise SystemExit(main())
