"""`charter demo documents`: seed 002's use cases A, B, D and E, end to end, no humans.

Publishes the four contracts and their org definitions for a fresh org, starts two
in-process workers running the documents engine, and moves a batch of documents through
them: invoices (the fast lane approves, posts and locks small ones from trusted vendors;
large ones wait for an approver), sales orders (an ANY join; low credit waits for a payment
event, which then arrives), shipments (proof of delivery arrives, or 72 hours pass on the
test clock and the escalation email goes out) and royalty periods (30 days on the test
clock, then an action, a condition and a webhook). Unless ``CHARTER_SMTP_URL`` names a mail
server, the emails go to a local one the demo starts (aiosmtpd) and are counted. Prints
where every document ended and one instance's path per use case.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from aiosmtpd.controller import Controller
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from charter.client import AsyncClient
from charter.db.connection import DatabaseTarget
from charter.documents import Document
from charter.engine.mode import detect_mode
from charter.usecases import USE_CASES
from charter.worker.runner import Worker, WorkerSettings

_ENTITY = {"A": "ap_invoice", "B": "sales_order", "D": "shipment", "E": "royalty_period"}


def run_documents_demo(target: DatabaseTarget, console: Console, *, documents: int = 40) -> int:
    return asyncio.run(_demo(target, console, documents))


async def _demo(target: DatabaseTarget, console: Console, count: int) -> int:
    logging.getLogger("charter.worker").setLevel(logging.ERROR)
    development = detect_mode(target) == "development"
    org = f"demo-{uuid.uuid4().hex[:8]}"
    # The embedded default is resolved again (not by its URL), so the client knows it is
    # development and may move the test clock.
    url = None if target.embedded is not None else target.url
    async with AsyncClient(url, org_id=org) as client:
        for contract, definition in USE_CASES.values():
            await client.definitions.publish(contract)
            await client.definitions.publish(contract, definition)
        for user, roles in (
            ("clerk", ["ap_clerk"]),
            ("reviewer", ["ap_clerk"]),  # approves what the clerk submits
            ("sales", ["sales"]),
            ("warehouse", ["warehouse"]),
            ("boss", ["logistics_manager", "franchise_ops"]),
        ):
            await client.directory.put_user(user, roles=roles, email=f"{user}@example.com")
        await client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        console.print(
            f"database: {target.display} ({target.source}); org {org}: use cases "
            f"{', '.join(USE_CASES)} published; {count} documents each"
        )
        settings = WorkerSettings(poll_interval=0.05)
        mail = _MailSink()
        stack = contextlib.ExitStack()
        if not os.environ.get("CHARTER_SMTP_URL"):
            url = stack.enter_context(_local_smtp(mail))
            console.print(f"emails go to a local SMTP server: {url}")
        workers = [Worker([], target, settings, worker_id=f"{org}-{n}") for n in range(2)]
        serving = [asyncio.create_task(w.serve()) for w in workers]
        started = time.monotonic()
        moved = False
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
        finally:
            if moved:
                await client.test_clock.reset()
            for worker in workers:
                worker.stop()
            await asyncio.gather(*serving)
            stack.close()
        elapsed = time.monotonic() - started
        finals = {case: [await client.documents.get(i) for i in ids[case]] for case in ids}
        _print_outcomes(console, finals, elapsed)
        if mail.received:
            console.print(f"{mail.received} emails delivered (escalations to the manager)")
        for case, docs in finals.items():
            await _print_path(console, client, case, docs[0])
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
    url = f"smtp://127.0.0.1:{port}?from=demo@charter.local&starttls=off"
    os.environ["CHARTER_SMTP_URL"] = url  # read by the workers' side-effects loop
    try:
        yield url
    finally:
        del os.environ["CHARTER_SMTP_URL"]
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
            {"open, waiting for approval": fifths, "open, waiting for delivery": count - fifths}
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
