"""The ``charter`` command."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from rich.console import Console
from rich.markup import escape

from charter.client import Client
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.compiler.mermaid import to_mermaid
from charter.db import connection, embedded
from charter.db import migrate as migrations
from charter.db.queries import query
from charter.db.sqlstate import charter_errors
from charter.demo import run_demo
from charter.documents_io import read_document
from charter.dsl.contract import EntityContract
from charter.engine.envelopes import publish_envelope
from charter.engine.flows import deploy_flow, flow_sql
from charter.engine.mode import detect_mode
from charter.errors import CharterError, ConfigurationError, FlowLoadError, RunInputError
from charter.expr import compile_expression, evaluate
from charter.status import render_lineage, render_run
from charter.templates import TEMPLATES
from charter.worker.loader import load_flows
from charter.worker.runner import Worker, WorkerSettings
from charter.worker.startup import prepare_flows

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)
log = logging.getLogger("charter")

# Exit codes: 0 ok, 1 a charter error, 2 usage (argparse), 3 the embedded server is not
# running (`charter db status`, as `pg_ctl status`), 130 interrupted.
EXIT_NOT_RUNNING = 3


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="charter: %(message)s",
        stream=sys.stderr,
    )
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except CharterError as exc:
        err.print(f"[bold red]error[/] [{exc.code}] {escape(exc.message)}")
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="charter", description="Durable, contracted workflows that live in PostgreSQL."
    )
    parser.add_argument(
        "--version", action="version", version=f"charter {metadata.version('charter')}"
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="PostgreSQL to use (default: $CHARTER_DATABASE_URL, else the embedded server)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="run charter's demo on the default database")
    demo.add_argument(
        "--runs", type=_positive_int, default=200, help="how many runs to start (default 200)"
    )
    demo.set_defaults(handler=_demo)

    worker = commands.add_parser(
        "worker", help="run flows: make sure the database has them, then work on their tasks"
    )
    worker.add_argument("flows", metavar="MODULE[:ATTRIBUTE]", help="where the flows are")
    worker.add_argument(
        "--deploy",
        action="store_true",
        help="publish a flow whose shape changed as a new version instead of stopping",
    )
    defaults = WorkerSettings()
    worker.add_argument(
        "--concurrency",
        type=_positive_int,
        default=defaults.concurrency,
        help=f"tasks run at once (default {defaults.concurrency})",
    )
    worker.add_argument(
        "--batch-size",
        type=_positive_int,
        default=defaults.batch_size,
        help=f"tasks claimed per query (default {defaults.batch_size})",
    )
    worker.add_argument(
        "--lease-seconds",
        type=_positive_int,
        default=defaults.lease_seconds,
        help="how long a claimed task stays ours without a heartbeat "
        f"(default {defaults.lease_seconds})",
    )
    worker.add_argument(
        "--poll-interval",
        type=float,
        default=defaults.poll_interval,
        help=f"seconds between polls when idle (default {defaults.poll_interval})",
    )
    worker.add_argument(
        "--grace",
        type=float,
        default=defaults.grace_seconds,
        help="seconds in-flight tasks get to finish on SIGTERM "
        f"(default {defaults.grace_seconds:g})",
    )
    worker.add_argument(
        "--check-only",
        action="store_true",
        help="ensure the flows are compiled, then exit without working",
    )
    worker.set_defaults(handler=_worker)

    run = commands.add_parser("run", help="start a run of a flow")
    run.add_argument("flow", metavar="MODULE:ATTRIBUTE", help="the flow (or MODULE with one flow)")
    run.add_argument("--input", default="null", help="the run input as JSON (default null)")
    run.add_argument("--run-id", help="a run id of your own (idempotent: same id, same run)")
    run.add_argument("--wait", action="store_true", help="wait for the run and print its output")
    run.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait with --wait (default 60)"
    )
    run.set_defaults(handler=_run)

    effective = commands.add_parser(
        "compile-effective",
        help="compile an entity contract (and an org definition) into the effective workflow",
    )
    effective.add_argument("contract", metavar="CONTRACT", help="entity contract (JSON or YAML)")
    effective.add_argument(
        "org",
        metavar="ORG_DEFINITION",
        nargs="?",
        help="org workflow definition with slot patches (JSON or YAML)",
    )
    shown = effective.add_mutually_exclusive_group()
    shown.add_argument("--diff", action="store_true", help="print what the org changed, by slot")
    shown.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart")
    shown.add_argument("--envelope", action="store_true", help="print the generated envelope")
    effective.add_argument(
        "--publish",
        action="store_true",
        help="also store the envelope as an immutable default definition",
    )
    effective.set_defaults(handler=_compile_effective)

    expr = commands.add_parser("expr", help="evaluate a typed-DSL expression")
    expr.add_argument("expression", metavar="EXPRESSION")
    expr.add_argument("--vars", default="{}", help="variables as JSON: entity, actor, org, context")
    expr.add_argument(
        "--schema", help='declared fields as JSON, e.g. \'{"entity": {"total": "number"}}\''
    )
    expr.add_argument(
        "--sql", action="store_true", help="evaluate with charter.eval_expr in the database"
    )
    expr.set_defaults(handler=_expr)

    templates = commands.add_parser("templates", help="the template library")
    templates.add_argument(
        "name", nargs="?", help="print this template's contract and org definition"
    )
    templates.set_defaults(handler=_templates)

    lineage = commands.add_parser("lineage", help="the ancestry tree of a workflow version")
    lineage.add_argument("version_id", metavar="VERSION_ID")
    lineage.add_argument("--json", action="store_true", help="print the tree as JSON")
    lineage.set_defaults(handler=_lineage)

    status = commands.add_parser("status", help="a run's status, steps, attempts and timing")
    status.add_argument("run_id", metavar="RUN_ID")
    status.add_argument("--json", action="store_true", help="print the run as JSON")
    status.set_defaults(handler=_status)

    deploy = commands.add_parser(
        "deploy", help="publish flows whose shape changed as new versions (deletes nothing)"
    )
    deploy.add_argument("flows", metavar="MODULE[:ATTRIBUTE]", help="where the flows are")
    deploy.set_defaults(handler=_deploy)

    compile_ = commands.add_parser(
        "compile", help="print the SQL that publishes flows (for migration files)"
    )
    compile_.add_argument("flows", metavar="MODULE[:ATTRIBUTE]", help="where the flows are")
    compile_.set_defaults(handler=_compile)

    migrate = commands.add_parser("migrate", help="install or upgrade schema charter")
    migrate.add_argument(
        "--dry-run", action="store_true", help="list what would be applied, change nothing"
    )
    migrate.set_defaults(handler=_migrate)

    db = commands.add_parser("db", help="the database charter uses")
    db_commands = db.add_subparsers(title="db commands", required=True, metavar="ACTION")
    db_commands.add_parser("status", help="where the database is and whether it runs").set_defaults(
        handler=_db_status
    )
    db_commands.add_parser(
        "url", help="print the connection URL (starts the embedded server if needed)"
    ).set_defaults(handler=_db_url)
    db_commands.add_parser("start", help="start the embedded server").set_defaults(
        handler=_db_start
    )
    db_commands.add_parser("stop", help="stop the embedded server").set_defaults(handler=_db_stop)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def _target(args: argparse.Namespace) -> connection.DatabaseTarget:
    target = connection.resolve(args.database_url)
    assert target is not None  # resolve() starts the embedded server when needed
    if target.embedded is not None:
        log.info(
            "using charter's embedded PostgreSQL %s in %s",
            target.embedded.version,
            target.embedded.data_dir,
        )
    return target


def _migrate(args: argparse.Namespace) -> int:
    target = _target(args)
    with connection.connect(target) as conn:
        if args.dry_run:
            files = migrations.pending(conn)
            for file in files:
                out.print(f"would apply {file.name}")
            if not files:
                out.print("schema charter is up to date")
            return 0
        report = migrations.migrate(conn)
    if report.changed:
        out.print(
            f"schema charter migrated to version {report.version} "
            f"({len(report.applied)} migrations, {len(report.reapplied)} function and "
            "trigger files applied)"
        )
    else:
        out.print(f"schema charter is up to date at version {report.version}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    return run_demo(_target(args), out, runs=args.runs)


def _worker(args: argparse.Namespace) -> int:
    flows = load_flows(args.flows)
    target = _target(args)
    with connection.connect(target) as conn:
        migrations.migrate(conn)
        mode = detect_mode(target)
        prepare_flows(conn, flows, mode=mode, deploy=args.deploy, spec=args.flows)
    if args.check_only:
        log.info("flows ready: %s", ", ".join(f.slug for f in flows))
        return 0
    settings = WorkerSettings(
        concurrency=args.concurrency,
        batch_size=args.batch_size,
        lease_seconds=args.lease_seconds,
        poll_interval=args.poll_interval,
        grace_seconds=args.grace,
    )
    worker = Worker(flows, target, settings)
    asyncio.run(worker.serve(install_signals=True))
    if worker.has_running_threads:
        # A sync handler still running past the grace period cannot be interrupted; its
        # task returns through its lease. Do not let the interpreter wait for it.
        logging.shutdown()
        os._exit(0)
    return 0


def _run(args: argparse.Namespace) -> int:
    flows = load_flows(args.flow)
    if len(flows) != 1:
        raise FlowLoadError(
            f"{args.flow} holds {len(flows)} flows ({', '.join(f.slug for f in flows)}); name "
            "one as MODULE:ATTRIBUTE."
        )
    try:
        run_input = json.loads(args.input)
    except json.JSONDecodeError as exc:
        raise RunInputError(
            f"--input is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}). "
            'Quote it for your shell, e.g. --input \'{"url": "https://example.com"}\'.'
        ) from None
    with Client(args.database_url) as client:
        run_id = client.start(flows[0], run_input, run_id=args.run_id)
        if not args.wait:
            out.print(run_id, markup=False)
            return 0
        run = client.wait(run_id, timeout=args.timeout)
    if run.status == "completed":
        out.print(json.dumps(run.output, indent=2, ensure_ascii=False), markup=False)
        return 0
    err.print(
        f"run {run.id} {run.status}: "
        f"{escape(json.dumps(run.error, ensure_ascii=False)) if run.error else ''}"
    )
    return 1


def _status(args: argparse.Namespace) -> int:
    with Client(args.database_url, migrate=False) as client:
        run = client.get_run(args.run_id)
    if args.json:
        out.print(
            json.dumps(dataclasses.asdict(run), indent=2, default=str, ensure_ascii=False),
            markup=False,
        )
    else:
        out.print(render_run(run))
    return 0


def _deploy(args: argparse.Namespace) -> int:
    flows = load_flows(args.flows)
    target = _target(args)
    with connection.connect(target) as conn:
        migrations.migrate(conn)
        for flow in flows:
            result = deploy_flow(conn, flow)
            out.print(
                f"flow '{flow.slug}': {result.status} (version {result.version}, "
                f"{result.version_id})"
            )
            for difference in result.differences:
                out.print(f"  - {difference}")
    return 0


def _compile(args: argparse.Namespace) -> int:
    for flow in load_flows(args.flows):
        out.print(flow_sql(flow), markup=False, end="")
    return 0


def _compile_effective(args: argparse.Namespace) -> int:
    contract = EntityContract.from_json(read_document(args.contract, "contract"))
    envelope = generate_envelope(contract)
    org = read_document(args.org, "org definition") if args.org else None
    compiled = compile_effective(envelope, org)
    if args.publish:
        with connection.connect(_target(args)) as conn:
            migrations.migrate(conn)
            stored = publish_envelope(conn, contract)
        log.info(
            "envelope %s: %s (version %s)",
            stored["workflowId"],
            stored["status"],
            stored["version"],
        )
    if args.envelope:
        text = json.dumps(envelope, indent=2, ensure_ascii=False)
    elif args.diff:
        text = json.dumps(
            diff_effective(compiled, compile_effective(envelope)), indent=2, ensure_ascii=False
        )
    elif args.mermaid:
        text = to_mermaid(compiled).rstrip("\n")
    else:
        text = json.dumps(compiled, indent=2, ensure_ascii=False)
    out.print(text, markup=False, highlight=False)
    return 0


def _expr(args: argparse.Namespace) -> int:
    variables = _json_argument(args.vars, "--vars")
    schema = _json_argument(args.schema, "--schema") if args.schema else None
    compiled = compile_expression(args.expression, schema)
    if args.sql:
        with connection.connect(_target(args)) as conn:
            migrations.migrate(conn)
            with charter_errors():
                row = conn.execute(
                    query("eval_expr"),
                    {"compiled": json.dumps(compiled), "variables": json.dumps(variables)},
                ).fetchone()
        audit = row[0] if row else None
    else:
        audit = evaluate(compiled, variables)
    out.print(json.dumps(audit, indent=2, ensure_ascii=False), markup=False, highlight=False)
    return 0


def _templates(args: argparse.Namespace) -> int:
    if not args.name:
        for name, template in TEMPLATES.items():
            out.print(f"{name}: {template.description}", markup=False)
        return 0
    chosen = TEMPLATES.get(args.name)
    if chosen is None:
        raise ConfigurationError(
            f"There is no template {args.name!r}; the templates are {', '.join(TEMPLATES)}."
        )
    out.print(
        json.dumps({"contract": chosen.contract, "org": chosen.org}, indent=2),
        markup=False,
        highlight=False,
    )
    return 0


def _json_argument(text: str, option: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{option} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}). "
            "Quote it for your shell."
        ) from None


def _lineage(args: argparse.Namespace) -> int:
    with Client(args.database_url) as client:
        tree = client.registry.lineage(args.version_id)
    if args.json:
        out.print(json.dumps(dataclasses.asdict(tree), indent=2, default=str), markup=False)
    else:
        out.print(render_lineage(tree))
    return 0


def _db_status(args: argparse.Namespace) -> int:
    target = connection.resolve(args.database_url, start_embedded=False)
    if target is None:
        data_dir = embedded.default_data_dir()
        state = "initialized" if (data_dir / "PG_VERSION").exists() else "not created yet"
        out.print(
            f"embedded PostgreSQL: not running\ndata directory: {data_dir} ({state})\n"
            "start it with `charter db start` (any charter command starts it on use)"
        )
        return EXIT_NOT_RUNNING
    with connection.connect(target) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        schema_version = migrations.current_version(conn)
    lines = [
        f"database: {target.display} ({target.source})",
        f"PostgreSQL {version[0] if version else '?'}",
    ]
    if target.embedded is not None:
        lines += [
            f"embedded server: running (pid {target.embedded.pid})",
            f"data directory: {target.embedded.data_dir}",
            f"log: {target.embedded.log_file}",
        ]
    lines.append(
        f"schema charter: version {schema_version}"
        if schema_version
        else "schema charter: not installed (run `charter migrate`)"
    )
    out.print("\n".join(lines))
    return 0


def _db_url(args: argparse.Namespace) -> int:
    out.print(_target(args).url, markup=False)
    return 0


def _db_start(args: argparse.Namespace) -> int:
    server = embedded.ensure_running()
    out.print(
        f"embedded PostgreSQL {server.version} running (pid {server.pid}) in {server.data_dir}"
    )
    elsewhere = connection.explicit_target(args.database_url)
    if elsewhere is not None:
        err.print(
            f"[bold yellow]note[/] the database charter targets here is "
            f"{escape(elsewhere.display)} (from {escape(elsewhere.source)}), not this embedded "
            f"server; {escape(connection.how_to_use_embedded(elsewhere))} to use it."
        )
    return 0


def _db_stop(args: argparse.Namespace) -> int:
    elsewhere = connection.explicit_target(args.database_url)
    if elsewhere is not None:
        # The user points charter at another database: stopping the embedded server (which
        # other charter processes may use) is almost certainly not what they meant.
        raise ConfigurationError(
            "`charter db stop` only manages charter's embedded PostgreSQL server, but this "
            f"command targets {elsewhere.display} (from {elsewhere.source}), which charter "
            "does not stop. Nothing was stopped. To stop the embedded server anyway, "
            f"{connection.how_to_use_embedded(elsewhere, 'charter db stop')}."
        )
    data_dir = embedded.default_data_dir()
    if embedded.stop(data_dir):
        out.print(f"stopped the embedded PostgreSQL in {data_dir}")
    else:
        out.print(f"the embedded PostgreSQL in {data_dir} was not running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
