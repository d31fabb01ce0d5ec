"""`charter keys create|list|revoke` (API keys for `charter serve`) and `charter doctor`
(workflow health and the stuck detector, with its ways out)."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
from typing import Any

from rich.markup import escape
from rich.table import Table

from charter.cli.common import err, out, print_json, target
from charter.cli.options import flag, option, port_number, wide
from charter.client.client import Client
from charter.db import connection, embedded
from charter.db.migrate import ensure_current
from charter.db.queries import query
from charter.db.store import perform
from charter.errors import ArgumentError, ConfigurationError
from charter.ops import api_keys as api_keys_ops
from charter.ops import health as health_ops


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = commands.add_parser("keys", help="API keys for charter serve: create, list, revoke")
    actions = keys.add_subparsers(title="keys commands", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="a key acting as one actor in one org (shown once)")
    option(create, "--org", help="the key's org (a platform key's: platform unless given)")
    option(create, "--actor",
           help="who the key acts as: a user of the org's directory, or service:NAME "
                "(a platform key's: service:platform unless given)")  # fmt: skip
    option(create, "--label", help="what the key is for (shown by keys list)")
    flag(create, "--platform",
         help="a platform key: may also publish contracts (they are the platform's)")  # fmt: skip
    create.set_defaults(handler=keys_create_command)
    listing = actions.add_parser("list", help="keys (never their secrets), newest last")
    option(listing, "--org", help="only this org's keys")
    flag(listing, "--json", help="print them as JSON")
    wide(listing)
    listing.set_defaults(handler=keys_list_command)
    revoke = actions.add_parser("revoke", help="stop a key from working, at once")
    revoke.add_argument("key_id", metavar="KEY_ID")
    revoke.set_defaults(handler=keys_revoke_command)

    serve = commands.add_parser(
        "serve", help="the HTTP API, /metrics and /openapi.json (every request needs an API key)"
    )
    option(serve, "--host", default="127.0.0.1", help="the address to listen on")
    option(serve, "--port", type=port_number, default=8400, help="the port to listen on")
    flag(serve, "--as-owner",
         help="run on a database role that owns schema charter or is a superuser (refused "
              "otherwise: serve on a member of charter_app)")  # fmt: skip
    serve.set_defaults(handler=serve_command)

    doctor = commands.add_parser(
        "doctor",
        help="workflow health of an org: queues, outboxes, dead letters, stuck and waiting "
        "instances (exit 1 when something is stuck or dead-lettered; waiting is not trouble)",
    )
    option(doctor, "--org", default="default", help="the org to examine")
    option(doctor, "--minutes", type=int, default=10,
           help="how overdue a task, event, timer or delivery (or how long an instance with "
                "nothing pending idles) before it is stuck")  # fmt: skip
    option(doctor, "--waiting-hours", type=float, default=24.0,
           help="list the instances waiting (for a person, an event...) this long")  # fmt: skip
    flag(doctor, "--json", help="print the report as JSON")
    group = doctor.add_mutually_exclusive_group()
    option(group, "--nudge", metavar="RUN_ID", help="have the engine run a stuck instance again")
    option(group, "--rebuild", metavar="RUN_ID", help="rebuild an instance's projection")
    option(group, "--force-fail", metavar="RUN_ID", help="fail a stuck instance (needs --reason)")
    option(doctor, "--reason", help="why, for --force-fail (kept in the instance's error)")
    doctor.set_defaults(handler=doctor_command)


def serve_command(*, database_url: str | None, host: str, port: int, as_owner: bool = False) -> int:
    import uvicorn

    from charter.api import create_app

    resolved = target(database_url)  # fail here, with charter's message, if unreachable
    if resolved.embedded is not None:
        # The owner brings the schema up to date, then the server runs as charter_serve.
        url, role = embedded.ensure_serve_role(resolved.embedded), embedded.SERVE_ROLE
    else:
        url, role = resolved.url, _serve_role(resolved, as_owner)
    # An owner (with --as-owner) migrates first; an app role checks the schema is current.
    app = create_app(url, migrate=True)
    out.print(
        f"charter serve on http://{host}:{port} (database {resolved.display}, role {escape(role)})"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0


def _serve_role(resolved: connection.DatabaseTarget, as_owner: bool) -> str:
    """The role ``resolved`` logs in as; refused (unless ``as_owner``) when it is a
    superuser or may change schema charter, which is more than a server should hold."""
    with connection.connect(resolved) as conn:
        row = conn.execute(query("role_privileges")).fetchone()
    role, superuser, owner = row if row else ("?", False, False)
    if not (superuser or owner):
        return str(role)
    what = "a superuser" if superuser else "the owner of schema charter"
    if not as_owner:
        raise ConfigurationError(
            f"charter serve refuses to run as {role}, {what} ({resolved.display}, from "
            f"{resolved.source}): every API key would then act with the owner's rights. "
            "Give it a login role that is a member of charter_app (CREATE ROLE serve LOGIN "
            "PASSWORD '…' IN ROLE charter_app), or pass --as-owner if this server must "
            "publish contracts."
        )
    err.print(
        f"[bold yellow]warning[/] charter serve runs as {escape(str(role))}, {what} "
        "(--as-owner): the owner acts as the engine (system and service: actors pass every "
        "policy), publishes contracts for every org, reads and writes every org's rows past "
        "row-level security, and migrates and deletes. Only platform keys publish contracts "
        "and the API never lets a key act as the engine, but a flaw in the server would "
        "reach all of that. Serve on a member of charter_app unless you need this."
    )
    return str(role)


def keys_create_command(
    *,
    database_url: str | None,
    org: str | None,
    actor: str | None,
    label: str | None,
    platform: bool = False,
) -> int:
    if platform:
        org, actor = org or "platform", actor or "service:platform"
    elif org is None or actor is None:
        raise ArgumentError(
            "charter keys create needs --org ORG and --actor (a user of the org's directory, "
            "or service:NAME); a platform key (--platform) has defaults for both."
        )
    with connection.connect(target(database_url)) as conn:
        ensure_current(conn)
        key = perform(
            conn, api_keys_ops.create_api_key(org, actor, label, getpass.getuser(), platform)
        )
    kind = "platform key" if key.platform else "key"
    out.print(
        f"{kind} {key.id} for {escape(key.actor)} in org {escape(key.org_id)} (shown once, "
        f"keep it secret):\n{key.key}"
    )
    return 0


def keys_list_command(*, database_url: str | None, org: str | None, json: bool) -> int:
    with connection.connect(target(database_url)) as conn:
        ensure_current(conn)
        keys = perform(conn, api_keys_ops.list_api_keys(org))
    if json:
        print_json([dataclasses.asdict(k) for k in keys])
        return 0
    if not keys:
        out.print("no API keys" + (f" in org {escape(org)}" if org else ""))
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("id", "org", "actor", "label", "platform", "created", "last used", "revoked"):
        table.add_column(column)
    for k in keys:
        table.add_row(
            k.id, escape(k.org_id), escape(k.actor), escape(k.label or ""),
            "yes" if k.platform else "", _when(k.created_at), _when(k.last_used_at),
            _when(k.revoked_at),
        )  # fmt: skip
    out.print(table)
    return 0


def keys_revoke_command(*, database_url: str | None, key_id: str) -> int:
    with connection.connect(target(database_url)) as conn:
        revoked = perform(conn, api_keys_ops.revoke_api_key(key_id))
    if not revoked:
        raise ArgumentError(f"no active key {key_id}; charter keys list shows them.")
    out.print(f"key {key_id} revoked")
    return 0


def doctor_command(
    *,
    database_url: str | None,
    org: str,
    minutes: int,
    json: bool,
    waiting_hours: float = 24.0,
    nudge: str | None,
    rebuild: str | None,
    force_fail: str | None,
    reason: str | None,
) -> int:
    if force_fail and not reason:
        raise ArgumentError("--force-fail needs --reason: say why (it is kept with the instance).")
    with Client(database_url, migrate=False, org_id=org) as client:
        actor = f"cli:{getpass.getuser()}"
        if nudge or rebuild or force_fail:
            run_id = nudge or rebuild or force_fail or ""
            if nudge:
                done = client.health.nudge(run_id, actor=actor)
            elif rebuild:
                done = client.health.rebuild(run_id)
            else:
                done = client.health.force_fail(run_id, reason or "", actor=actor)
            if not done:
                raise ArgumentError(f"org {org} has no running instance {run_id}.")
            out.print(f"{'nudged' if nudge else 'rebuilt' if rebuild else 'failed'}: {run_id}")
            return 0
        report = client.health.report(stuck_minutes=minutes)
        waiting = client.health.waiting_longer_than(hours=waiting_hours, stuck_minutes=minutes)
    trouble = 1 if report.stuck or report.dead_letters else 0
    if json:
        print_json(report.raw)
        return trouble
    events, effects = report.document_events, report.side_effects
    p95 = report.step_latency_p95_ms
    out.print(f"org {escape(org)}: {report.workers_alive} workers alive")
    for queue in report.flow_queues:
        age = queue.get("oldestReadySeconds")
        out.print(
            f"flow {escape(queue['flow'])} v{queue['version']}: {queue['ready']} ready, "
            f"{queue['running']} running" + (f", oldest waiting {age:.0f}s" if age else "")
        )
    for name, box in (("document events", events), ("side effects", effects)):
        age = box.get("oldestPendingSeconds")
        out.print(
            f"{name}: {box['pending']} pending, {box['processing']} processing "
            f"({box['stuckProcessing']} past their lease), {box['deadLetters']} dead letters"
            + (f", oldest pending {age:.0f}s" if age else "")
        )
    out.print(
        f"instances: {report.instances['running']} running, {report.instances['failed']} failed"
    )
    out.print(
        "p95 step latency (last hour, waits left out): "
        + (f"{p95:.1f} ms" if p95 is not None else "n/a")
    )
    waits = report.wait_latency_p95_ms
    out.print(
        "p95 waits (last hour): "
        + (", ".join(f"{kind} {_duration(ms)}" for kind, ms in waits.items()) or "none ended")
    )
    for f in report.failures:
        out.print(
            f"  failed {f.run_id}  {escape(f.entity_type)} {escape(f.document_id)} at "
            f"{escape(f.node or '?')}: [{escape(f.code or '?')}] {escape(f.message or '')}"
        )
    _print_waiting(report.waiting, waiting, waiting_hours)
    out.print(f"{report.dead_letters} dead letters (charter dlq: retry or drop them)")
    if not report.stuck:
        out.print(f"0 stuck (nothing overdue by {minutes} min, nothing idle with nothing pending)")
        return trouble
    out.print(f"[bold]{len(report.stuck)} stuck[/] (overdue by {minutes} min, or nothing pending):")
    for s in report.stuck:
        what = (
            f"{escape(s.entity_type or '')} {escape(s.document_id)}"
            if s.document_id
            else f"flow run {escape(s.run_id or '')}"
        )
        out.print(
            f"  {s.run_id or '-'}  {what} at {escape(', '.join(s.current_nodes))}, "
            f"[bold]{escape(s.reason)}[/]: {escape(health_ops.STUCK_REASONS.get(s.reason, ''))}"
        )
        if s.kind == "instance" and s.run_id:
            out.print(
                f"      charter doctor --org {escape(org)} --nudge {s.run_id} | --rebuild | "
                "--force-fail"
            )
    return 1


def _duration(ms: float) -> str:
    """1.2 s, 4.5 min, 2.0 h, 3.1 d: a wait in the unit that reads best."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            return f"{ms / size:.1f} {unit}"
    return f"{ms:.1f} ms"


def _print_waiting(
    counts: dict[str, Any], waiting: dict[str, list[health_ops.WaitingInstance]], hours: float
) -> None:
    by_kind = counts.get("byKind") or {}
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(by_kind.items()))
    out.print(
        f"{counts.get('instances', 0)} waiting (not trouble)" + (f": {kinds}" if kinds else "")
    )
    longer = [w for kind in sorted(waiting) for w in waiting[kind]]
    if longer:
        out.print(f"  {len(longer)} waiting longer than {hours:g} h:")
    for w in longer[:20]:
        out.print(
            f"    {w.run_id}  {escape(w.entity_type)} {escape(w.document_id)} waits for "
            f"{escape(w.kind)} at {escape(w.node or '-')}, {w.waiting_seconds / 3600:.1f} h"
        )
    if len(longer) > 20:
        out.print(f"    … and {len(longer) - 20} more (client.health.waiting_longer_than)")


def _when(moment: object) -> str:
    return moment.isoformat(timespec="seconds") if hasattr(moment, "isoformat") else ""
