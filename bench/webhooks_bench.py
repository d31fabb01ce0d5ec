"""Webhooks delivered per second: the side-effects outbox drained by `charter worker` into a
local HTTP receiver, with 1 and then 2 worker processes.

    .venv/bin/python bench/webhooks_bench.py [--webhooks 5000]

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database `charter_webhooks_bench` (dropped and made again). For each worker count, queues
N signed webhooks through `charter.enqueue_webhook` (the app's path: receipt, outbox row),
starts the workers, and measures from the first claim to the last delivery as the database
recorded them (each delivery: claim, HMAC signature, HTTP POST, 200, `finish_side_effect`).
The receiver is a keep-alive HTTP/1.1 server in its own process that counts what it got.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing import Process, Value
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import _admin_url, _peak_mb  # noqa: E402

from charter import migrate  # noqa: E402
from charter.db import connection  # noqa: E402


def _receive(port: Any, received: Any) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real receivers do
        disable_nagle_algorithm = True  # headers and body go out as two writes

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with received.get_lock():
                received.value += 1
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer.request_queue_size = 256  # two workers open up to 40 connections
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port.value = server.server_address[1]
    server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webhooks", type=int, default=5000)
    args = parser.parse_args()
    url = _fresh(_admin_url())
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        server = conn.execute("SHOW server_version").fetchone()[0]
    port, received = Value("i", 0), Value("q", 0)
    receiver = Process(target=_receive, args=(port, received), daemon=True)
    receiver.start()
    while not port.value:
        time.sleep(0.01)
    print(f"server: PostgreSQL {server} at {connection.redact(url)}")
    print(f"receiver: http://127.0.0.1:{port.value} (its own process)\n")
    try:
        for workers in (1, 2):
            rate, memory = _round(
                url, f"http://127.0.0.1:{port.value}/hook", args.webhooks, workers
            )
            print(f"{workers} worker{'s' if workers > 1 else ' '}: {rate:>7,.0f} webhooks/s "
                  f"({args.webhooks:,} delivered, peak worker memory {memory:.0f} MB)")  # fmt: skip
        print(f"\nthe receiver got {received.value:,} requests for {2 * args.webhooks:,} webhooks")
    finally:
        receiver.terminate()
    return 0 if received.value == 2 * args.webhooks else 1


def _round(url: str, target: str, count: int, workers: int) -> tuple[float, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE charter.side_effects")
        conn.execute(
            "SELECT charter.enqueue_webhook('bench', %s, jsonb_build_object('n', n))"
            " FROM generate_series(1, %s) AS n",
            (target, count),
        )
        conn.execute("ANALYZE charter.side_effects")
        procs = [_worker(url) for _ in range(workers)]
        try:
            done = "SELECT count(*) FROM charter.side_effects WHERE status = 'completed'"
            while conn.execute(done).fetchone()[0] < count:
                failed = conn.execute(
                    "SELECT count(*) FROM charter.side_effects WHERE status <> 'completed'"
                    " AND attempts > 1"
                ).fetchone()[0]
                if failed:
                    raise SystemExit(f"{failed} webhooks needed a second attempt: not a clean run")
                time.sleep(0.1)
            memory = max(_peak_mb(p.pid) for p in procs)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(30)
        first, last = conn.execute(
            "SELECT min(dequeued_at), max(completed_at) FROM charter.side_effects"
        ).fetchone()
    return count / (last - first).total_seconds(), memory


def _worker(url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CHARTER_DATABASE_URL": url, "CHARTER_MODE": "production"}
    return subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--poll-interval", "0.05"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _fresh(admin_url: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS charter_webhooks_bench WITH (FORCE)")
        admin.execute("CREATE DATABASE charter_webhooks_bench")
    params = conninfo.conninfo_to_dict(admin_url)
    params["dbname"] = "charter_webhooks_bench"
    return conninfo.make_conninfo("", **params)


if __name__ == "__main__":
    raise SystemExit(main())
