"""The documents kernel at scale: mutate() with a million documents in the table.

    .venv/bin/python bench/documents_bench.py [--documents 1000000] [--seconds 10]

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database `charter_docs_bench` (dropped and made again). Loads the invoice contract and a
million documents (each with its first version and audit row, written in bulk), then
measures, beside pgbench's single-row UPDATE on the same server (run before and after each
of pgbench's `mutate()` runs, which are set against the two beside them):

* mutations/s of `documents.update` and of `documents.transition` (submit, then reject back
  to draft), from 4 client processes each working on its own documents, as pgbench runs 4
  clients; then from 4 threads of one process sharing one Client, for what one Python
  process gets; and `mutate()` called by pgbench's own 4 clients (updates, and transitions
  there and back), the SQL's share alone;
* the latency of one `update` (p50, p95) from a single thread with nothing else running;
* use case A's fast lane end to end (seed 002): small invoices from a trusted vendor created
  and submitted from 4 threads while two in-process workers run the documents engine, which
  approves each through its workflow, posts it by an action and locks it — invoices/s from
  the first create to the last one active, and the p50 time from submit to active.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import _admin_url, _pgbench  # noqa: E402

from charter import Client, migrate  # noqa: E402
from charter.db import connection  # noqa: E402
from charter.library.templates import TEMPLATES  # noqa: E402

THREADS = 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--invoices", type=int, default=2000, help="fast-lane invoices")
    args = parser.parse_args()
    url = _fresh(_admin_url())
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        server = conn.execute("SHOW server_version").fetchone()[0]
    with Client(url, org_id="acme", pool_size=THREADS + 1) as client:
        contract = dict(TEMPLATES["invoice_approval"].contract)
        contract["fields"] = {"grand_total": "number", "vendor_id": "string"}
        # Every gate has its policy (closed by default); updates have none, as before.
        gates = ("submit", "approve", "amend", "cancel")
        contract["policies"] = {gate: {"roles": ["clerk"]} for gate in gates}
        client.definitions.publish(contract)
        client.directory.put_user("u-1", roles=["clerk", "manager"])
        started = time.monotonic()
        _load(url, args.documents)
        loaded = time.monotonic() - started
        print(f"server: PostgreSQL {server} at {connection.redact(url)}")
        print(f"loaded {args.documents:,} documents in {loaded:.0f}s")
        # The ceiling is measured before and after each of pgbench's mutate() runs, and each
        # run is set against the mean of the two beside it: on a shared machine the disk's
        # and the CPU's speed drift by tens of percent within a minute.
        print("pgbench's single-row UPDATE, -c 4 -j 2 (the ceiling), runs before and after each:")
        ceilings = [_pgbench(url, seconds=int(args.seconds))]
        # mutate() alone, called by pgbench's own 4 clients: the SQL's share, no Python.
        mutate_sql = (
            f"\\set i random(1, {args.documents})\n"
            "SELECT charter.mutate('acme', 'update', 'd-' || :i, "
            "jsonb_build_object('grand_total', :i), 'u-1');\n"
        )
        rate = _pgbench(url, int(args.seconds), mutate_sql)
        ceilings.append(_pgbench(url, seconds=int(args.seconds)))
        print(
            f"update      pgbench's 4 clients calling mutate(): {rate:>8,.0f} mutations/s  "
            f"{_beside(rate, ceilings[-2:])}"
        )
        # Submit, then back to draft: two transitions per script, each client on its own
        # documents (d-(client + 1 + 4k)), so no two clients pass a gate of one document.
        transition_sql = (
            f"\\set i :client_id + 1 + {THREADS} * random(0, {args.documents // THREADS - 1})\n"
            "SELECT charter.mutate('acme', 'submit', 'd-' || :i, NULL, 'u-1');\n"
            "SELECT charter.mutate('acme', 'approve', 'd-' || :i, NULL, 'u-1', "
            "NULL, NULL, NULL, NULL, 'draft');\n"
        )
        rate = 2 * _pgbench(url, int(args.seconds), transition_sql)
        ceilings.append(_pgbench(url, seconds=int(args.seconds)))
        print(
            f"transition  pgbench's 4 clients calling mutate(): {rate:>8,.0f} mutations/s  "
            f"{_beside(rate, ceilings[-2:])}"
        )
        tps = statistics.mean(ceilings)
        print(f"the ceiling: {tps:,.0f} tps, the mean of those runs; the rates below use it\n")
        per_client = args.documents // THREADS
        for kind in ("update", "transition"):
            rate = _rate_processes(url, kind, per_client, args.seconds)
            print(
                f"{kind:<11} {THREADS} client processes: {rate:>8,.0f} mutations/s  "
                f"({100 * rate / tps:.1f}% of the ceiling)"
            )
            rate = _rate(client, kind, per_client, args.seconds)
            print(f"{kind:<11} {THREADS} threads of one process: {rate:>8,.0f} mutations/s")
        p50, p95 = _latency(client, samples=500)
        print(f"\none update, idle server: p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    rate, settle = _fast_lane(url, args.invoices)
    print(
        f"\nuse case A fast lane (create, submit, approve, post, lock), 2 workers: "
        f"{rate:,.0f} invoices/s ({100 * rate / tps:.1f}% of the ceiling); "
        f"submit to active p50 {settle:.0f} ms"
    )
    return 0


def _beside(rate: float, ceilings: list[float]) -> str:
    before, after = ceilings
    share = 100 * rate / statistics.mean(ceilings)
    return f"({share:.1f}% of the ceiling: {before:,.0f} tps before, {after:,.0f} after)"


def _drain_backlog(url: str) -> None:
    """The events the mutation benchmarks left (no engine ran then) are applied first.
    Watched with EXISTS every 0.2 s: counting the backlog over and over took a core from
    the engine it was timing."""
    open_events = "FROM charter.document_events WHERE status IN ('pending', 'processing')"
    with psycopg.connect(url, autocommit=True) as conn:
        backlog = conn.execute(f"SELECT count(*) {open_events}").fetchone()[0]
        began = time.monotonic()
        while conn.execute(f"SELECT EXISTS (SELECT 1 {open_events})").fetchone()[0]:
            time.sleep(0.2)
    if backlog:
        took = time.monotonic() - began
        print(
            f"\nthe engine applied the {backlog:,} events the mutations above left "
            f"in {took:.1f}s ({backlog / took:,.0f} events/s; their documents have no workflow)"
        )


def _fast_lane(url: str, count: int) -> tuple[float, float]:
    """Invoices/s of use case A's fast lane, and the p50 from submit to active (ms)."""
    import asyncio

    from charter.db.connection import DatabaseTarget
    from charter.demos.use_cases import invoice_contract, invoice_org
    from charter.worker.runner import Worker, WorkerSettings

    with Client(url, org_id="fast", pool_size=THREADS + 1) as client:
        client.definitions.publish(invoice_contract())
        client.definitions.publish(invoice_contract(), invoice_org())
        client.directory.put_user("clerk", roles=["ap_clerk"])
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        workers = [
            Worker([], DatabaseTarget(url, "bench"), WorkerSettings(poll_interval=0.05))
            for _ in range(2)
        ]
        loops = [asyncio.new_event_loop() for _ in workers]
        runners = [
            threading.Thread(target=loop.run_until_complete, args=(w.serve(),), daemon=True)
            for loop, w in zip(loops, workers, strict=True)
        ]
        for runner in runners:
            runner.start()
        for worker in workers:
            worker.ready.wait(30)
        _drain_backlog(url)
        submitted: dict[str, float] = {}
        began = time.monotonic()

        def make(n: int) -> None:
            for i in range(n, count, THREADS):
                data = {"grand_total": 100 + i % 300, "vendor_id": "v-trusted"}
                doc = client.documents.create("ap_invoice", data, actor="clerk", id=f"fl-{i}")
                client.documents.transition(doc.id, "submit", actor="clerk")
                submitted[doc.id] = time.monotonic()

        makers = [threading.Thread(target=make, args=(n,)) for n in range(THREADS)]
        for maker in makers:
            maker.start()
        for maker in makers:
            maker.join()
        with psycopg.connect(url, autocommit=True) as conn:
            while True:
                done = conn.execute(
                    "SELECT count(*) FROM charter.documents WHERE org_id = 'fast' "
                    "AND state = 'active' AND data ? 'gl_batch'"
                ).fetchone()[0]
                if done >= count:
                    break
                time.sleep(0.02)
            finished = time.monotonic()
            rows = conn.execute(
                "SELECT d.id, extract(epoch FROM i.completed_at - e.created_at) * 1000"
                " FROM charter.documents AS d"
                " JOIN charter.workflow_instances AS i"
                "  ON i.document_id = d.id AND i.org_id = d.org_id"
                " JOIN charter.document_events AS e ON e.document_id = d.id AND e.org_id = d.org_id"
                "  AND e.event_type = 'on_lifecycle_transition' AND e.entity_version = 2"
                " WHERE d.org_id = 'fast'"
            ).fetchall()
        for worker, loop in zip(workers, loops, strict=True):
            loop.call_soon_threadsafe(worker.stop)
        for runner in runners:
            runner.join(60)
    return count / (finished - began), statistics.median(float(ms) for _, ms in rows)


def _fresh(admin_url: str) -> str:
    from psycopg import conninfo

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS charter_docs_bench WITH (FORCE)")
        admin.execute("CREATE DATABASE charter_docs_bench")
    params = conninfo.conninfo_to_dict(admin_url)
    params["dbname"] = "charter_docs_bench"
    return conninfo.make_conninfo("", **params)


def _load(url: str, count: int) -> None:
    """Documents d-1 … d-N in draft, each with version 1 and its audit row, in bulk."""
    with psycopg.connect(url, autocommit=True) as conn:
        contract = conn.execute(
            "SELECT current_version_id FROM charter.workflows WHERE slug = 'envelope:invoice'"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO charter.documents (id, org_id, entity_type, contract_version_id, version,"
            " state, data) SELECT 'd-' || g, 'acme', 'invoice', %s, 1, 'draft',"
            " jsonb_build_object('grand_total', g, 'vendor_id', 'v-' || (g %% 100))"
            " FROM generate_series(1, %s) AS g",
            (contract, count),
        )
        conn.execute(
            "INSERT INTO charter.document_versions (document_id, version, org_id, state, data,"
            " changes, action, actor) SELECT d.id, 1, d.org_id, d.state, d.data, '{}', 'create',"
            " 'u-1' FROM charter.documents AS d"
        )
        conn.execute(
            "INSERT INTO charter.document_audit (org_id, document_id, entity_type, version, action,"
            " actor, run_as, via, changes, trace_id) SELECT d.org_id, d.id, d.entity_type, 1,"
            " 'create', 'u-1', 'actor', 'api', '{}', md5(d.id) FROM charter.documents AS d"
        )
        # Only the loaded tables: the engine's tables stay as they are in a new database (not
        # yet analyzed, so the planner assumes nothing). An analyze of them while they are
        # empty would freeze "empty" plans where autovacuum is off, as on some test servers.
        for table in ("documents", "document_versions", "document_audit"):
            conn.execute(f"VACUUM ANALYZE charter.{table}")


def _mutations(client: Client, kind: str, first: int, count: int, stop: float) -> int:
    """Mutations of documents d-first … d-(first + count - 1), round robin, until ``stop``."""
    done = 0
    i = 0
    while time.monotonic() < stop:
        doc = f"d-{first + i % count}"
        if kind == "update":
            client.documents.update(doc, {"grand_total": i}, actor="u-1")
        else:
            state = client.documents.transition(doc, "submit", actor="u-1").state
            assert state == "submitted"
            client.documents.transition(doc, "approve", actor="u-1", to="draft")
            done += 1
        done += 1
        i += 1
    return done


def _rate(client: Client, kind: str, per_thread: int, seconds: float) -> float:
    """Mutations/s from THREADS threads of this process sharing one Client."""
    done = [0] * THREADS
    stop = time.monotonic() + seconds

    def work(n: int) -> None:
        done[n] = _mutations(client, kind, n * per_thread + 1, per_thread, stop)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.monotonic() - began)


def _rate_processes(url: str, kind: str, per_client: int, seconds: float) -> float:
    """Mutations/s from THREADS client processes, each with its own Client: the same four
    clients pgbench runs, without one Python process's GIL between them."""
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(THREADS + 1)
    results = context.Queue()
    clients = [
        context.Process(
            target=_client_process,
            args=(url, kind, n * per_client + 1, per_client, seconds, ready, results),
        )
        for n in range(THREADS)
    ]
    for process in clients:
        process.start()
    ready.wait(60)
    began = time.monotonic()
    counts, ends = zip(*(results.get(timeout=seconds + 60) for _ in clients), strict=True)
    for process in clients:
        process.join(30)
    return float(sum(counts) / (max(ends) - began))


def _client_process(
    url: str, kind: str, first: int, count: int, seconds: float, ready: Any, results: Any
) -> None:
    with Client(url, org_id="acme", pool_size=1) as client:
        client.documents.get(f"d-{first}")  # connected and migrated before the clock starts
        ready.wait(60)
        done = _mutations(client, kind, first, count, time.monotonic() + seconds)
        results.put((done, time.monotonic()))


def _latency(client: Client, samples: int) -> tuple[float, float]:
    took = []
    for i in range(samples):
        began = time.perf_counter()
        client.documents.update(f"d-{i + 1}", {"grand_total": -i}, actor="u-1")
        took.append((time.perf_counter() - began) * 1000)
    took.sort()
    return statistics.median(took), took[int(len(took) * 0.95) - 1]


if __name__ == "__main__":
    sys.exit(main())
