"""The documents engine's own cost on use case A's fast lane, by the backend's CPU clock.

    .venv/bin/python bench/fast_lane_engine.py [--invoices 1000] [--database charter_fast_lane]
    PYTHONPATH=/tmp/other/src .venv/bin/python bench/fast_lane_engine.py   # another commit's code

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database (dropped and made again). Creates and submits the invoices from 4 threads with no
engine running, then one session claims and applies their events as a worker does
(`claim_document_events` of 100, `apply_document_events`, a commit per claim) until none is
left, and prints the PostgreSQL CPU of that session per invoice (utime + stime of its
backend, from /proc: the server must run on this machine) beside its wall time. The end to
end figure of `documents_bench.py` shares two cores with the clients and the machine's
other work; this one counts only the engine's SQL, so two commits can be compared in the
same minutes (a `git archive` of the other commit, put first on PYTHONPATH). With
`--profile`, `track_functions` is on in that session and the functions' self time follows.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import _admin_url, _fresh_database  # noqa: E402

import charter  # noqa: E402
from charter import Client, migrate  # noqa: E402
from charter.demos.use_cases import invoice_contract, invoice_org  # noqa: E402

THREADS = 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--invoices", type=int, default=1000)
    parser.add_argument("--database", default="charter_fast_lane")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    url = _fresh_database(_admin_url(), args.database)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
    _submit(url, args.invoices)
    with psycopg.connect(url, autocommit=True) as conn:
        if args.profile:
            conn.execute("SET track_functions = 'all'")
            conn.execute("SELECT pg_stat_reset()")
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        versions = [r[0] for r in conn.execute("SELECT id FROM charter.workflow_versions")]
        ticks, began, claims = _ticks(pid), time.monotonic(), 0
        while True:
            with conn.transaction():
                claimed = conn.execute(
                    "SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]')"
                    " FROM charter.claim_document_events('bench', 100, 60) AS e"
                ).fetchone()[0]  # type: ignore[index]
                if not claimed:
                    break
                conn.execute(
                    "SELECT charter.apply_document_events(%s, %s, '{}', 'bench')",
                    (Jsonb(claimed), versions),
                )
            claims += 1
        cpu = (_ticks(pid) - ticks) * 1000 / _CLOCK_TICKS / args.invoices
        wall = (time.monotonic() - began) * 1000 / args.invoices
        done = conn.execute(
            "SELECT count(*) FROM charter.documents WHERE org_id = 'fast'"
            " AND state = 'active' AND data ? 'gl_batch'"
        ).fetchone()[0]  # type: ignore[index]
        print(
            f"charter from {Path(charter.__file__).parent}: {done} of {args.invoices} invoices "
            f"active in {claims} claims; PostgreSQL CPU {cpu:.2f} ms an invoice, wall {wall:.2f} ms"
        )
        if args.profile:
            # A backend flushes its statistics at most once a second; this one now.
            conn.execute("SELECT pg_stat_force_next_flush()")
            conn.execute("SELECT 1")
            print("function, calls, total ms, self ms, self µs a call")
            for row in conn.execute(
                "SELECT funcname, calls, round(total_time::numeric, 1),"
                " round(self_time::numeric, 1), round((self_time / calls * 1000)::numeric, 1)"
                " FROM pg_stat_user_functions"
                " ORDER BY self_time DESC LIMIT 30"
            ):
                print(*row)
    return 0


_CLOCK_TICKS = 100  # USER_HZ


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _submit(url: str, count: int) -> None:
    """Fast-lane invoices (a trusted vendor, small totals) created and submitted, as in
    documents_bench.py, with no engine running."""
    with Client(url, org_id="fast", pool_size=THREADS + 1) as client:
        client.definitions.publish(invoice_contract())
        client.definitions.publish(invoice_contract(), invoice_org())
        client.directory.put_user("clerk", roles=["ap_clerk"])
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})

        def make(first: int) -> None:
            for i in range(first, count, THREADS):
                data = {"grand_total": 100 + i % 300, "vendor_id": "v-trusted"}
                doc = client.documents.create("ap_invoice", data, actor="clerk", id=f"fl-{i}")
                client.documents.transition(doc.id, "submit", actor="clerk")

        makers = [threading.Thread(target=make, args=(n,)) for n in range(THREADS)]
        for maker in makers:
            maker.start()
        for maker in makers:
            maker.join()


if __name__ == "__main__":
    raise SystemExit(main())
