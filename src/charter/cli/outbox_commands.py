"""`charter dlq list|show|retry|drop` (the side-effects dead letter queue) and
`charter maintenance` (retention)."""

from __future__ import annotations

import argparse
import dataclasses

from rich.markup import escape
from rich.table import Table

from charter.cli.common import out, print_json, target
from charter.cli.options import flag, option
from charter.client import Client
from charter.db import connection
from charter.errors import ArgumentError
from charter.settings import retention_days as default_retention_days
from charter.store import Call, first_value, perform, single


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dlq = commands.add_parser("dlq", help="side effects out of attempts: list, show, retry, drop")
    actions = dlq.add_subparsers(title="dlq commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the org's dead letters, newest first")
    option(listing, "--org", default="default", help="the org whose dead letters to list")
    option(listing, "--limit", type=int, default=100, help="at most this many")
    option(listing, "--run", dest="run_id", help="only this run's (a document's instance)")
    flag(listing, "--json", help="print them as JSON")
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
        help="retention: prune old receipts and delivered outbox rows, drop old partitions",
    )
    option(maintenance, "--retention-days", type=int, default=None,
           help="keep this many days (default $CHARTER_RETENTION_DAYS, else 90)")  # fmt: skip
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


def maintenance_command(*, database_url: str | None, retention_days: int | None, json: bool) -> int:
    days = retention_days if retention_days is not None else default_retention_days()
    if days < 1:
        raise ArgumentError(f"--retention-days {days}: retention must be at least 1 day.")
    with connection.connect(target(database_url)) as conn:
        report = perform(
            conn, single(Call("run_maintenance", {"retention_days": days}, first_value))
        )
    if json:
        print_json(report)
        return 0
    if "skipped" in report:
        out.print(f"maintenance skipped: {report['skipped']}")
        return 0
    receipts, rows = report["receiptsPruned"], report["deliveredRowsPruned"]
    out.print(
        f"retention {days} days (before {report['cutoff']}): "
        f"{receipts['steps']} step receipts and {receipts['outbox']} outbox receipts pruned; "
        f"{rows['sideEffects']} delivered side effects and {rows['documentEvents']} applied "
        "document events pruned"
    )
    for name in report["partitionsDropped"]:
        out.print(f"dropped partition {name}")
    for kept in report["partitionsKept"]:
        out.print(f"kept partition {kept['partition']}: {kept['reason']}")
    return 0
