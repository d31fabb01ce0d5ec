"""A caller's start-to-finished latency of a 1-step run, this checkout against another commit.

    .venv/bin/python bench/latency_ab.py REF [--rounds 6] [--runs 250]

On a shared machine the same code measures a millisecond apart from one minute to the next,
so a change is judged against the code before it in the same minutes: REF (a commit, e.g.
HEAD~3) is checked out into a temporary git worktree, each side gets its own database on
CHARTER_DATABASE_URL's server (else charter's embedded PostgreSQL), and the rounds take
turns: one worker of that side's code, then `client.start()` + `client.wait()` of RUNS idle
runs one after another, p50 and p95 from the client's clock. The client is this checkout's
for both sides; only the worker, the SQL and the schema differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import _admin_url, _fresh_database, _start_to_finished  # noqa: E402

_SETUP = (
    "import sys, psycopg, bench_flows; from charter import migrate; "
    # charter.ops.flows since the package split; charter.engine.flows on older commits
    "import importlib, importlib.util; deploy_flow = importlib.import_module("
    "'charter.ops.flows' if importlib.util.find_spec('charter.ops') else 'charter.engine.flows'"
    ").deploy_flow; "
    "c = psycopg.connect(sys.argv[1], autocommit=True); migrate(c); "
    "deploy_flow(c, bench_flows.one_step)"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="the commit to compare with, e.g. HEAD~1")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=250, help="runs per round")
    args = parser.parse_args()
    admin = _admin_url()
    with tempfile.TemporaryDirectory(prefix="charter-ab-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), args.ref],
            cwd=HERE.parent,
            check=True,
            capture_output=True,
        )
        try:
            sides = {args.ref: tree / "src", "this checkout": HERE.parent / "src"}
            urls = {}
            for n, (side, src) in enumerate(sides.items()):
                urls[side] = _fresh_database(admin, f"charter_ab_{n}")
                subprocess.run(
                    [sys.executable, "-c", _SETUP, urls[side]],
                    env=_env(src),
                    cwd=HERE,
                    check=True,
                )
            results: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
                for side in order:
                    results[side].append(_start_to_finished(urls[side], args.runs, sides[side]))
            for side, figures in results.items():
                p50s = " ".join(f"{p50:.2f}" for p50, _ in figures)
                print(
                    f"{side:>14}: p50 per round {p50s} ms; median p50 "
                    f"{statistics.median(p for p, _ in figures):.2f} ms, median p95 "
                    f"{statistics.median(p for _, p in figures):.2f} ms"
                )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)],
                cwd=HERE.parent,
                check=False,
                capture_output=True,
            )
    return 0


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{HERE}"}


if __name__ == "__main__":
    sys.exit(main())
