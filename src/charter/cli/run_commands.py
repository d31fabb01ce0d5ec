"""`charter run`, `charter status`, `charter runs list|cancel|retry`, `charter workers`
and `charter queue`: operating runs without writing Python."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

from rich.markup import escape
from rich.table import Table

from charter.cli.common import (
    EXIT_ERROR,
    EXIT_RUN_FAILED,
    EXIT_WAIT_TIMEOUT,
    err,
    json_argument,
    out,
    print_json,
)
from charter.cli.options import flag, option, positive_float, positive_int, seconds, wide
from charter.cli.render import render_document, render_run
from charter.client.client import Client
from charter.db.store import Operation
from charter.dsl.flow import SLUG_PATTERN, Flow
from charter.errors import (
    ArgumentError,
    CharterError,
    FlowLoadError,
    RunInputError,
    RunWaitTimeoutError,
)
from charter.ops import runs as ops
from charter.ops.workers import DEAD_WORKER_SECONDS
from charter.vocabulary import RunStatus
from charter.worker.loader import load_flows


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="start a run of a flow")
    run.add_argument(
        "flow",
        metavar="SLUG|MODULE:ATTRIBUTE",
        help="a flow slug (runs the published flow; imports nothing), or where the flow is "
        "in code (MODULE:ATTRIBUTE, or MODULE with one flow)",
    )
    option(run, "--input", default="null",
           help="the run input: JSON, @FILE with JSON, or - to read standard input")  # fmt: skip
    option(run, "--run-id", help="a run id of your own (idempotent: same id, same run)")
    option(run, "--priority", type=int,
           help="0-1000, higher first: claimed as if ready N minutes earlier")  # fmt: skip
    flag(run, "--wait", help="wait for the run; print its id, then its output")
    option(run, "--timeout", type=positive_float, default=60.0, help="seconds to wait")
    run.set_defaults(handler=run_command)

    status = commands.add_parser(
        "status", help="a run's (or a document's workflow's) status, steps, attempts and timing"
    )
    status.add_argument("run_id", metavar="RUN_ID", nargs="?", default=None)
    option(status, "--document", metavar="DOCUMENT_ID",
           help="show this document's workflow instance instead of a run")  # fmt: skip
    option(status, "--org", help="the run's org (any org when the id names one run), or the "
           "document's (with --document; default: default)")  # fmt: skip
    flag(status, "--json", help="print the run as JSON")
    status.set_defaults(handler=status_command)

    runs = commands.add_parser("runs", help="list, cancel and retry runs")
    actions = runs.add_subparsers(title="runs commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="runs, newest first")
    option(listing, "--flow", env="CHARTER_RUNS_FLOW", help="only runs of this flow (slug)")
    option(listing, "--status", choices=[status.value for status in RunStatus],
           env="CHARTER_RUNS_STATUS", help="only runs with this status")  # fmt: skip
    option(
        listing,
        "--limit",
        type=positive_int,
        default=20,
        env="CHARTER_RUNS_LIMIT",
        help="runs per page",
    )
    option(
        listing,
        "--after",
        metavar="RUN_ID",
        env="CHARTER_RUNS_AFTER",
        help="the page after this run",
    )
    option(listing, "--org", help="only this org's runs (default: every org's)")
    flag(listing, "--json", help="print the runs as JSON")
    wide(listing)
    listing.set_defaults(handler=runs_list_command)
    cancel = actions.add_parser("cancel", help="cancel running runs")
    cancel.add_argument("run_ids", metavar="RUN_ID", nargs="+")
    option(cancel, "--org", help="the runs' org (needed for an id several orgs use)")
    option(
        cancel,
        "--actor",
        help="who cancels (a document's audit trail names them; default: the database role)",
    )
    option(cancel, "--reason", help="why (a document's audit trail keeps it)")
    cancel.set_defaults(handler=runs_cancel_command)
    retry = actions.add_parser("retry", help="resume failed runs from their failed steps")
    retry.add_argument("run_ids", metavar="RUN_ID", nargs="+")
    option(retry, "--org", help="the runs' org (needed for an id several orgs use)")
    option(
        retry,
        "--actor",
        help="who retries (a document's instance evidence names them; default: the database role)",
    )
    retry.set_defaults(handler=runs_retry_command)

    workers = commands.add_parser("workers", help="the workers: alive, concurrency, claimed")
    flag(workers, "--all", env="CHARTER_WORKERS_ALL",
         help="include stopped workers, and dead ones however long ago they died")  # fmt: skip
    option(workers, "--dead-after", type=seconds, default=DEAD_WORKER_SECONDS,
           env="CHARTER_DEAD_WORKER_SECONDS", metavar="SECONDS",
           help="a dead worker (its heartbeat lapsed, no clean stop) is listed for this long "
           "after its last heartbeat")  # fmt: skip
    flag(workers, "--json", help="print the workers as JSON")
    wide(workers)
    workers.set_defaults(handler=workers_command)

    queue = commands.add_parser("queue", help="queue depth and oldest waiting task per flow")
    flag(queue, "--json", help="print the queue as JSON")
    wide(queue)
    queue.set_defaults(handler=queue_command)


def _flow(spec: str) -> Flow | str:
    """A slug names a published flow; anything with ':' or '.' is code to import."""
    if ":" not in spec and "." not in spec and SLUG_PATTERN.match(spec):
        return spec
    flows = load_flows(spec)
    if len(flows) != 1:
        raise FlowLoadError(
            f"{spec} holds {len(flows)} flows ({', '.join(f.slug for f in flows)}); name "
            "one as MODULE:ATTRIBUTE, or run it by its slug."
        )
    return flows[0]


def run_command(
    *,
    database_url: str | None,
    flow: str,
    input: str,
    run_id: str | None,
    wait: bool,
    timeout: float,
    priority: int | None = None,
) -> int:
    chosen = _flow(flow)
    run_input = json_argument(input, "--input", error=RunInputError)
    with Client(database_url, migrate=not isinstance(chosen, str)) as client:
        started = client.start(chosen, run_input, run_id=run_id, priority=priority)
        if not wait:
            out.print(started, markup=False)
            return 0
        err.print(f"run {escape(started)}")
        try:
            run = client.wait(started, timeout=timeout)
        except RunWaitTimeoutError as exc:
            err.print(f"[bold red]error[/] [{exc.code}] {escape(exc.message)}")
            return EXIT_WAIT_TIMEOUT
    if run.status == "completed":
        print_json(run.output)
        return 0
    detail = f"{run.error.get('type')}: {run.error.get('message')}" if run.error else ""
    err.print(f"run {escape(run.id)} {run.status}{': ' if detail else ''}{escape(detail)}")
    return EXIT_RUN_FAILED


def status_command(
    *,
    database_url: str | None,
    run_id: str | None,
    document: str | None,
    org: str | None,
    json: bool,
) -> int:
    if (run_id is None) == (document is None):
        raise ArgumentError("Name a run (charter status RUN_ID) or a document (--document ID).")
    if document is not None:
        return _document_status(database_url, document, org or "default", json)
    assert run_id is not None
    # An operator's view: the run of --org, or of whichever org has this id.
    with Client(database_url, migrate=False) as client:
        run = client.store.perform(ops.get_run(run_id, org))
    if json:
        print_json(dataclasses.asdict(run))
    else:
        out.print(render_run(run))
    return 0


def _document_status(database_url: str | None, document_id: str, org: str, json: bool) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        doc = client.documents.get(document_id)
        run_id = doc.workflow.run_id if doc.workflow else None
        run = client.get_run(run_id) if run_id else None
    if json:
        print_json(
            {"document": dataclasses.asdict(doc), "run": dataclasses.asdict(run) if run else None}
        )
    else:
        out.print(render_document(doc, run))
    return 0


def runs_list_command(
    *,
    database_url: str | None,
    flow: str | None,
    status: str | None,
    limit: int,
    after: str | None,
    org: str | None,
    json: bool,
) -> int:
    # An operator's list: every org's runs, or --org's.
    with Client(database_url, migrate=False) as client:
        runs = client.store.perform(ops.list_runs(flow, status, limit, after, org_id=org))
    if json:
        print_json([dataclasses.asdict(run) for run in runs])
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("run", "flow", "version", "status", "created", "took", "cost"):
        table.add_column(column)
    for run in runs:
        took = (run.finished_at - run.created_at).total_seconds() if run.finished_at else None
        table.add_row(
            escape(run.id),
            run.flow,
            str(run.version),
            run.status,
            run.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            f"{took:.3f}s" if took is not None else "",
            f"${run.usd_cost:.4f}" if run.usd_cost else "",
        )
    out.print(table)
    if len(runs) == limit:
        out.print(f"more: charter runs list --limit {limit} --after {escape(runs[-1].id)}")
    return 0


def runs_cancel_command(
    *,
    database_url: str | None,
    run_ids: list[str],
    org: str | None,
    actor: str | None,
    reason: str | None,
) -> int:
    return _each(database_url, run_ids, lambda run_id: ops.cancel(run_id, org, actor, reason))


def runs_retry_command(
    *, database_url: str | None, run_ids: list[str], org: str | None, actor: str | None = None
) -> int:
    return _each(database_url, run_ids, lambda run_id: ops.retry(run_id, org, actor))


def _each(
    database_url: str | None, run_ids: list[str], operation: Callable[[str], Operation[str]]
) -> int:
    failures = 0
    with Client(database_url, migrate=False) as client:
        for run_id in run_ids:
            try:
                # An operator's command: the run of --org, or of whichever org has this id.
                op = operation(run_id)
                status = client.store.perform(op)
                out.print(f"{escape(_shown_id(run_id))}: {status}")
            except CharterError as exc:
                failures += 1
                err.print(
                    f"[bold red]error[/] {escape(_shown_id(run_id))}: [{exc.code}] "
                    f"{escape(exc.message)}"
                )
    return EXIT_ERROR if failures else 0


def _shown_id(run_id: str) -> str:
    """A run id on a line of its own: as it is, or quoted when it holds line breaks or
    characters a terminal does not show (it is then not a run id charter can store)."""
    return run_id if run_id.isprintable() else repr(run_id)


def workers_command(
    *, database_url: str | None, all: bool, json: bool, dead_after: int = DEAD_WORKER_SECONDS
) -> int:
    with Client(database_url, migrate=False) as client:
        workers = client.workers(include_stopped=all, dead_after_seconds=dead_after)
    if json:
        print_json([dataclasses.asdict(w) for w in workers])
        return 0
    if not workers:
        out.print("no workers" + ("" if all else " running (--all shows stopped and dead ones)"))
        return 0
    now = datetime.now(UTC)
    table = Table(box=None, pad_edge=False)
    for column in (
        "worker",
        "alive",
        "flows",
        "versions",
        "orgs",
        "concurrency",
        "claimed",
        "heartbeat",
    ):
        table.add_column(column)
    for w in workers:
        table.add_row(
            escape(w.id),
            "yes" if w.alive else ("stopped" if w.stopped_at else "no (lease lapsed)"),
            ", ".join(w.flows),
            ", ".join(w.versions),
            "all" if w.orgs is None else escape(", ".join(w.orgs)),
            str(w.concurrency),
            str(w.claimed),
            f"{(now - w.last_heartbeat_at).total_seconds():.0f}s ago",
        )
    out.print(table)
    return 0


def queue_command(*, database_url: str | None, json: bool) -> int:
    with Client(database_url, migrate=False) as client:
        entries = client.queue()
    if json:
        print_json([dataclasses.asdict(e) for e in entries])
        return 0
    if not entries:
        out.print("the queue is empty")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("flow", "version", "ready", "scheduled", "running", "oldest ready", "workers"):
        table.add_column(column)
    for e in entries:
        oldest = f"{e.oldest_ready_seconds:.1f}s" if e.oldest_ready_seconds is not None else ""
        table.add_row(
            e.flow,
            f"v{e.version}",
            str(e.ready),
            str(e.scheduled),
            str(e.running),
            oldest,
            str(e.serving_workers) if e.serving_workers else "[yellow]none[/]",
        )
    out.print(table)
    return 0
