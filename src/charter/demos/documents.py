"""`charter demo documents`: seed 002's use cases A, B, D and E, end to end, no humans.

Publishes the four contracts and their org definitions for a fresh org, starts two
in-process workers running the documents engine, and moves a batch of documents through
them: invoices (the fast lane approves, posts and locks small ones from trusted vendors;
large ones wait for an approver), sales orders (an ANY join; low credit waits for a payment
event, which then arrives), shipments (proof of delivery arrives, or 72 hours pass on the
test clock and the escalation email goes out) and royalty periods (30 days on the test
clock, then an action, a condition and a webhook). Prints where every document ended and one
instance's path per use case.

The demo stays in its lane: it runs in an org of its own (``demo-<random>``), its two
workers serve that org only, the test clock it moves is that org's, its emails go to an SMTP
server it starts on 127.0.0.1 (aiosmtpd) and its webhooks to an HTTP receiver it starts on
127.0.0.1, both counted. Nothing it does contacts another machine. At the end it cancels
what is still pending in its org (waits, approval requests, deliveries), so no other worker
picks any of it up, and says what it left: the org's documents and their evidence, which
charter never deletes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import re
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from charter.client.client import AsyncClient
from charter.db.connection import DatabaseTarget
from charter.db.mode import detect_mode
from charter.demos.use_cases import USE_CASES
from charter.ops.documents import Document
from charter.vocabulary import InstanceStatus
from charter.worker.runner import Worker, WorkerSettings

_UNFINISHED = (InstanceStatus.RUNNING, InstanceStatus.PAUSED)

_ENTITY = {"A": "ap_invoice", "B": "sales_order", "D": "shipment", "E": "royalty_period"}


def run_documents_demo(target: DatabaseTarget, console: Console, *, documents: int = 40) -> int:
    return asyncio.run(_demo(target, console, documents))


async def _demo(target: DatabaseTarget, console: Console, count: int) -> int:
    for name in ("charter.worker", "mail.log", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    development = detect_mode(target) == "development"
    org = f"demo-{uuid.uuid4().hex[:8]}"
    # The embedded default is resolved again (not by its URL), so the client knows it is
    # development and may move the test clock.
    url = None if target.embedded is not None else target.url
    receiver = _Receiver()
    stack = contextlib.ExitStack()
    stack.callback(receiver.close)
    async with AsyncClient(url, org_id=org) as client:
        for contract, definition in USE_CASES.values():
            await client.definitions.publish(contract)
            await client.definitions.publish(contract, _sent_to(definition, receiver.url))
        for user, roles in (
            ("clerk", ["ap_clerk"]),
            ("reviewer", ["ap_clerk"]),  # approves what the clerk submits
            ("sales", ["sales"]),
            ("warehouse", ["warehouse"]),
            ("boss", ["logistics_manager", "franchise_ops"]),
        ):
            await client.directory.put_user(user, roles=roles, email=f"{user}@localhost")
        await client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        console.print(
            f"database: {target.display} ({target.source}); org {org}: use cases "
            f"{', '.join(USE_CASES)} published; {count} documents each"
        )
        mail = _MailSink()
        smtp = stack.enter_context(_local_smtp(mail))
        settings = WorkerSettings(
            poll_interval=0.05,
            orgs=(org,),  # its own org only
            smtp_url=smtp,
            webhook_allow="127.0.0.1/32",  # its receiver
        )
        console.print(f"emails go to a local SMTP server ({smtp}), webhooks to {receiver.url}")
        workers = [Worker([], target, settings, worker_id=f"{org}-{n}") for n in range(2)]
        serving = [asyncio.create_task(w.serve()) for w in workers]
        started = time.monotonic()
        moved = False
        ids: dict[str, list[str]] = {}
        try:
            ids = await _create(client, count)
            await _settle(client, ids, console, "documents settled")
            await _events(client, ids, count)
            if development:
                await client.test_clock.advance(timedelta(days=31))
                moved = True
            else:
                console.print("production database: the test clock stays put, so timers wait")
            await _settle(client, ids, console, "after events and 31 days")
            elapsed = time.monotonic() - started
            finals = {case: [await client.documents.get(i) for i in ids[case]] for case in ids}
            _print_outcomes(console, finals, elapsed)
            if mail.received:
                console.print(f"{mail.received} emails delivered (escalations to the manager)")
            if receiver.received:
                console.print(f"{receiver.received} webhooks received (royalty statements)")
            for case, docs in finals.items():
                await _print_path(console, client, case, docs[0])
        finally:
            if moved:
                await client.test_clock.reset()
            for worker in workers:
                worker.stop()
            await asyncio.gather(*serving)
            stack.close()
            await _clean_up(client, org, ids, console)
    expected = _expected(count, development)
    got = {case: Counter(_where(d) for d in docs) for case, docs in finals.items()}
    if got != expected:
        console.print(f"[red]unexpected outcomes[/red]: {got} (expected {expected})")
        return 1
    return 0


async def _create(client: AsyncClient, count: int) -> dict[str, list[str]]:
    docs = client.documents
    ids: dict[str, list[str]] = {case: [] for case in _ENTITY}
    for n in range(count):
        small = n % 2 == 0
        invoice = {"grand_total": 120 if small else 9000, "vendor_id": "v-trusted"}
        doc = await docs.create("ap_invoice", invoice, actor="clerk")
        await docs.transition(doc.id, "submit", actor="clerk")
        ids["A"].append(doc.id)
        order = {"order_id": f"SO-{n}", "grand_total": 100, "credit_available": 500 * (n % 2)}
        doc = await docs.create("sales_order", order, actor="sales")
        await docs.transition(doc.id, "submit", actor="sales")
        ids["B"].append(doc.id)
        shipment = {"shipment_id": f"SH-{n}", "carrier": "ACME Freight"}
        doc = await docs.create("shipment", shipment, actor="sales")
        await docs.transition(doc.id, "dispatch", actor="sales")
        ids["D"].append(doc.id)
        period = {"franchisee": f"F-{n}", "sales": 1000 + n, "anomalies": n % 5 == 0}
        doc = await docs.create("royalty_period", period, actor="sales")
        ids["E"].append(doc.id)
    return ids


async def _events(client: AsyncClient, ids: dict[str, list[str]], count: int) -> None:
    for n in range(count):
        if n % 2 == 0:  # low credit: the payment arrives
            await client.events.send(f"payment:SO-{n}", {"amount": 100}, event_id=f"pay-{n}")
        if n % 3 != 0:  # two shipments in three are confirmed; the rest time out
            await client.events.send(f"delivery:pod:SH-{n}", {"signed_by": f"receiver {n}"})


async def _settle(
    client: AsyncClient, ids: dict[str, list[str]], console: Console, label: str
) -> None:
    every = [doc_id for case in ids.values() for doc_id in case]
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        bar = progress.add_task(label, total=len(every))
        for done, doc_id in enumerate(every, 1):
            # Idle, not settled: timers wait for the test clock, webhooks for their portal.
            await client.documents.wait(doc_id, timeout=120, until="idle")
            progress.update(bar, completed=done)


def _where(document: Document) -> str:
    workflow = document.workflow
    if workflow is None or workflow.status != "running":
        return f"{document.state} ({workflow.status if workflow else 'no instance'})"
    kinds = ", ".join(sorted({w.kind for w in workflow.waiting_for})) or "nothing"
    return f"{document.state}, waiting for {kinds}"


def _sent_to(definition: dict[str, Any], base: str) -> dict[str, Any]:
    """The org definition with its webhooks sent to ``base`` (the demo's own receiver)."""
    copied = copy.deepcopy(definition)
    for slot in copied.get("slots", {}).values():
        for node in slot.get("nodes", []):
            if node.get("type") == "webhook_out":
                node["config"]["url"] = re.sub(r"^https?://[^/]*", base, node["config"]["url"])
    return copied


async def _clean_up(
    client: AsyncClient, org: str, ids: dict[str, list[str]], console: Console
) -> None:
    """Cancels what is still pending in the demo's org, so that no other worker fires its
    timers, escalates its approvals or sends its deliveries, then says what is left."""
    every = [doc_id for case in ids.values() for doc_id in case]
    cancelled = 0
    for doc_id in every:
        workflow = (await client.documents.get(doc_id)).workflow
        if workflow is not None and workflow.run_id and workflow.status in _UNFINISHED:
            await client.cancel(workflow.run_id, actor="system", reason="the documents demo ended")
            cancelled += 1
    console.print(
        f"left in the database: org {org} with {len(every)} documents and their evidence "
        f"(charter never deletes evidence); {cancelled} unfinished instances cancelled, so "
        "nothing of the demo is pending for any worker"
    )


class _Server(ThreadingHTTPServer):
    # The workers send many statements at once: the default listen backlog of 5 would
    # refuse some and leave them to a retry.
    request_queue_size = 128


class _Receiver:
    """An HTTP receiver on 127.0.0.1 that accepts every webhook and counts them."""

    def __init__(self) -> None:
        self.received = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _MailSink:
    """Counts what the local SMTP server received."""

    received = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received += 1
        return "250 Message accepted"


@contextlib.contextmanager
def _local_smtp(sink: _MailSink) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    url = f"smtp://127.0.0.1:{port}?from=demo@localhost&starttls=off"
    try:
        yield url
    finally:
        controller.stop()


def _expected(count: int, development: bool) -> dict[str, Counter[str]]:
    evens, odds = (count + 1) // 2, count // 2
    thirds = len([n for n in range(count) if n % 3 == 0])
    fifths = len([n for n in range(count) if n % 5 == 0])
    return {
        "A": Counter({"active (completed)": evens, "submitted, waiting for approval": odds}),
        "B": Counter({"confirmed (completed)": count}),
        "D": Counter(
            {
                "delivered (completed)": count - thirds,
                "in_transit, waiting for " + ("approval" if development else "event"): thirds,
            }
        ),
        "E": Counter(
            {"open, waiting for approval": fifths, "closed (completed)": count - fifths}
            if development
            else {"open, waiting for timer": count}
        ),
    }


def _print_outcomes(console: Console, finals: dict[str, list[Document]], elapsed: float) -> None:
    total = sum(len(docs) for docs in finals.values())
    console.print(f"{total} documents in {elapsed:.2f}s")
    table = Table(title="where the documents are", box=None)
    for column in ("use case", "entity type", "documents", "outcome"):
        table.add_column(column, justify="right" if column == "documents" else "left")
    for case, docs in finals.items():
        for outcome, number in sorted(Counter(_where(d) for d in docs).items()):
            table.add_row(case, _ENTITY[case], str(number), outcome)
    console.print(table)


async def _print_path(console: Console, client: AsyncClient, case: str, doc: Document) -> None:
    if doc.workflow is None or doc.workflow.run_id is None:
        return
    run = await client.get_run(doc.workflow.run_id)
    path: list[Any] = []
    for step in run.steps:
        if step.slug.startswith("$"):
            continue
        name = step.slug.rsplit(":", 1)[-1]
        path.append(name if step.status == "completed" else f"{name} ({step.status})")
    console.print(f"[bold]{case}[/bold] {doc.id[:8]}…: " + " → ".join(path))
