"""`charter dlq list|show|retry|drop` (the side-effects dead letter queue) and
`charter maintenance` (retention, and archiving old evidence with ``--archive-before``)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table

from charter.cli.common import out, print_json, target
from charter.cli.options import flag, option, wide
from charter.client.client import Client
from charter.db import connection
from charter.db.store import Call, first_value, perform, single
from charter.errors import ArchiveDateInvalidError, ArgumentError
from charter.settings import retention_days as default_retention_days


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dlq = commands.add_parser("dlq", help="side effects out of attempts: list, show, retry, drop")
    actions = dlq.add_subparsers(title="dlq commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the org's dead letters, newest first")
    option(listing, "--org", default="default", help="the org whose dead letters to list")
    option(listing, "--limit", type=int, default=100, help="at most this many")
    option(listing, "--run", dest="run_id", help="only this run's (a document's instance)")
    flag(listing, "--json", help="print them as JSON")
    wide(listing)
    listing.set_defaults(handler=dlq_list_command)
    show = actions.add_parser("show", help="one dead letter: request, last response, error")
    show.add_argument("effect_id", metavar="ID", type=int)
    option(show, "--org", default="default", help="the effect's org")
    show.set_defaults(handler=dlq_show_command)
    for name, what in (
        ("retry", "send again with the same idempotency key and fresh attempts"),
        ("drop", "give up for good (kept as cancelled)"),
    ):
        action = actions.add_parser(name, help=what)
        action.add_argument("effect_ids", metavar="ID", type=int, nargs="+")
        option(action, "--org", default="default", help="the effects' org")
        option(action, "--actor", help="who does it (kept with the effect)")
        action.set_defaults(handler=dlq_retry_command if name == "retry" else dlq_drop_command)

    maintenance = commands.add_parser(
        "maintenance",
        help="retention: forget finished flow runs and delivered outbox rows past the window "
        "(a document's evidence is kept); --archive-before moves old evidence to the archive",
    )
    option(maintenance, "--retention-days", type=int, default=None,
           help="keep this many days (default $CHARTER_RETENTION_DAYS, else 90)")  # fmt: skip
    option(maintenance, "--archive-before", metavar="YYYY-MM-DD", default=None,
           help="then move the evidence partitions of months that ended on or before this day "
                "to schema charter_archive (get_run, documents.history still read it)")  # fmt: skip
    flag(maintenance, "--json", help="print the report as JSON")
    maintenance.set_defaults(handler=maintenance_command)


def dlq_list_command(
    *, database_url: str | None, org: str, limit: int, json: bool, run_id: str | None = None
) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        letters = client.dead_letters.list(limit=limit, run_id=run_id)
    if json:
        print_json([dataclasses.asdict(d) for d in letters])
        return 0
    if not letters:
        out.print(f"org {escape(org)} has no dead letters")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("id", "channel", "target", "attempts", "last error", "dead since", "run"):
        table.add_column(column)
    for d in letters:
        table.add_row(
            str(d.id),
            d.channel,
            escape(d.target[:60]),
            str(d.attempts),
            escape((d.last_error or "")[:70]),
            d.completed_at.isoformat(timespec="seconds") if d.completed_at else "",
            escape(f"{d.run_id} {d.node}" if d.run_id else "(app)"),
        )
    out.print(table)
    return 0


def dlq_show_command(*, database_url: str | None, org: str, effect_id: int) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        effect = client.side_effects.get(effect_id)
    if effect is None:
        raise ArgumentError(f"org {org} has no side effect {effect_id}; see charter dlq list.")
    print_json(dataclasses.asdict(effect))
    return 0


def dlq_retry_command(
    *, database_url: str | None, org: str, effect_ids: list[int], actor: str | None
) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        done = client.dead_letters.retry(effect_ids, actor=actor)
    out.print(f"{len(done)} re-driven (same idempotency keys): {', '.join(map(str, done))}")
    return 0


def dlq_drop_command(
    *, database_url: str | None, org: str, effect_ids: list[int], actor: str | None
) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        done = client.dead_letters.drop(effect_ids, actor=actor)
    out.print(f"{len(done)} dropped: {', '.join(map(str, done))}")
    return 0


def maintenance_command(
    *, database_url: str | None, retention_days: int | None, archive_before: str | None, json: bool
) -> int:
    days = retention_days if retention_days is not None else default_retention_days()
    if days < 1:
        raise ArgumentError(f"--retention-days {days}: retention must be at least 1 day.")
    before = None if archive_before is None else archive_date(archive_before)
    with connection.connect(target(database_url)) as conn:
        report = perform(
            conn, single(Call("run_maintenance", {"retention_days": days}, first_value))
        )
        if before is not None:
            report["archive"] = perform(
                conn, single(Call("archive_evidence", {"before": before}, first_value))
            )
    if json:
        print_json(report)
        return 0
    if "skipped" in report:
        out.print(f"maintenance skipped: {report['skipped']}")
    else:
        _print_retention(days, report)
    if "archive" in report:
        _print_archive(report["archive"])
    return 0


def archive_date(text: str) -> datetime.date:
    """The day of ``--archive-before``: an ISO date, YYYY-MM-DD."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ArchiveDateInvalidError(
            f"--archive-before {text!r} is not a date: write a past day as YYYY-MM-DD, "
            "e.g. --archive-before 2025-01-01."
        ) from None


def _print_retention(days: int, report: dict[str, Any]) -> None:
    receipts, rows, runs = (
        report["receiptsPruned"],
        report["deliveredRowsPruned"],
        report["flowRunsForgotten"],
    )
    out.print(
        f"retention {days} days (before {report['cutoff']}): "
        f"{runs['runs']} finished flow runs forgotten ({runs['stepExecutions']} step executions); "
        f"{receipts['steps']} step receipts and {receipts['outbox']} outbox receipts pruned; "
        f"{rows['sideEffects']} delivered side effects and {rows['documentEvents']} applied "
        "document events pruned; documents' evidence kept"
    )
    for name in report["partitionsDropped"]:
        out.print(f"dropped partition {name}")
    for kept in report["partitionsKept"]:
        out.print(f"kept partition {kept['partition']}: {kept['reason']}")


def _print_archive(report: dict[str, Any]) -> None:
    if "skipped" in report:
        out.print(f"archive skipped: {report['skipped']}")
        return
    archived = report["partitionsArchived"]
    many = "partition" if len(archived) == 1 else "partitions"
    out.print(f"archive before {report['archiveBefore']}: {len(archived)} {many} archived")
    for name in archived:
        out.print(f"archived partition {name}")
    for kept in report["partitionsKept"]:
        out.print(f"not archived {kept['partition']}: {kept['reason']}")
