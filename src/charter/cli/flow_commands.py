"""`charter worker`, `charter deploy`, `charter compile` and `charter flows delete`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from rich.prompt import Confirm

from charter.cli.common import err, log, out, target
from charter.cli.options import flag, option, positive_float, positive_int
from charter.client.client import Client
from charter.db import connection
from charter.db import migrate as migrations
from charter.db.mode import detect_mode
from charter.db.store import perform
from charter.dsl.actions import registered_actions
from charter.errors import ArgumentError, FlowNotFoundError
from charter.ops import compiled_artifacts as artifacts
from charter.ops import flows as flows_ops
from charter.ops.flows import deploy_flow, flow_sql
from charter.settings import worker_orgs
from charter.worker.loader import load_flows
from charter.worker.runner import Worker, WorkerSettings, served_orgs
from charter.worker.startup import check_published, prepare_flows


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="run flows and document workflows: with a module, make sure the database has its "
        "flows and work on their tasks; with or without one, run the documents engine",
    )
    worker.add_argument(
        "flows",
        metavar="MODULE[:ATTRIBUTE]",
        nargs="?",
        default=None,
        help="where the flows (and @charter.action handlers) are; omit it to run the "
        "documents engine alone",
    )
    flag(worker, "--deploy", help="publish a flow whose shape changed as a new version")
    defaults = WorkerSettings()
    option(worker, "--concurrency", type=positive_int, default=defaults.concurrency,
           help="tasks run at once")  # fmt: skip
    option(worker, "--batch-size", type=positive_int, default=defaults.batch_size,
           help="tasks claimed per query")  # fmt: skip
    option(worker, "--lease-seconds", type=positive_int, default=defaults.lease_seconds,
           help="how long a claimed task stays ours without a heartbeat")  # fmt: skip
    option(worker, "--metrics-port", type=int, default=None,
           help="also serve the worker's own metrics at 127.0.0.1:PORT/metrics")  # fmt: skip
    option(worker, "--poll-interval", type=positive_float, default=defaults.poll_interval,
           help="seconds between polls when idle")  # fmt: skip
    option(worker, "--grace", type=positive_float, default=defaults.grace_seconds,
           help="seconds in-flight tasks get to finish on SIGTERM")  # fmt: skip
    option(worker, "--block-warning", type=positive_float,
           default=defaults.block_warning_seconds,
           help="seconds the event loop may be blocked before the log names the step")  # fmt: skip
    option(worker, "--pool-size", type=positive_int, default=defaults.pool_size,
           help="database connections of the worker")  # fmt: skip
    worker.add_argument(
        "--org",
        dest="orgs",
        action="append",
        metavar="ORG",
        default=None,
        help="serve this org only (repeat for several): its tasks, events, action tasks, side "
        "effects, waits and schedules; every org by default ($CHARTER_WORKER_ORGS, "
        "comma-separated)",
    )
    flag(worker, "--check-only", help="ensure the flows are compiled, then exit without working")
    worker.set_defaults(handler=worker_command)

    deploy = commands.add_parser(
        "deploy", help="publish flows whose shape changed as new versions (deletes nothing)"
    )
    deploy.add_argument("flows", metavar="MODULE[:ATTRIBUTE]", help="where the flows are")
    deploy.set_defaults(handler=deploy_command)

    compile_ = commands.add_parser(
        "compile", help="print the SQL that publishes flows (for migration files)"
    )
    compile_.add_argument("flows", metavar="MODULE[:ATTRIBUTE]", help="where the flows are")
    compile_.set_defaults(handler=compile_command)

    recompile = commands.add_parser(
        "recompile",
        help="compile again the stored flow and contracted workflow versions whose artifact "
        "is missing, stale or damaged (WF-07; the schema's owner)",
    )
    flag(
        recompile,
        "--all",
        env="CHARTER_RECOMPILE_ALL",
        help="compile every flow version again, not only the broken ones",
    )
    recompile.set_defaults(handler=recompile_command)

    flows = commands.add_parser("flows", help="manage flows in the database")
    actions = flows.add_subparsers(title="flows commands", required=True, metavar="ACTION")
    delete = actions.add_parser(
        "delete", help="delete a flow with all its versions, runs and evidence (asks first)"
    )
    delete.add_argument("slug", metavar="SLUG")
    # No environment variables: a deletion is confirmed on the command line, each time.
    flag(delete, "--yes", env="", help="do not ask for confirmation")
    flag(delete, "--force", env="", help="required as well in production")
    delete.set_defaults(handler=flows_delete_command)


def worker_command(
    *,
    database_url: str | None,
    flows: str | None,
    deploy: bool,
    concurrency: int,
    batch_size: int,
    lease_seconds: int,
    poll_interval: float,
    grace: float,
    block_warning: float,
    pool_size: int,
    check_only: bool,
    metrics_port: int | None = None,
    orgs: list[str] | None = None,
) -> int:
    if orgs is None:
        orgs = list(worker_orgs())
    served_orgs(orgs)  # a bad org id is refused before anything starts
    loaded = load_flows(flows, allow_actions_only=True) if flows else []
    resolved = target(database_url)
    with connection.connect(resolved) as conn:
        # A least-privilege role (charter_worker) starts without DDL: it only checks.
        owner = migrations.can_migrate(conn)
        migrations.ensure_current(conn)
        if loaded and owner:
            prepare_flows(conn, loaded, mode=detect_mode(resolved), deploy=deploy, spec=flows)
        elif loaded:
            check_published(conn, loaded, deploy=deploy, spec=str(flows))
    if check_only:
        log.info("flows ready: %s", ", ".join(f.slug for f in loaded) or "none")
        return 0
    if metrics_port is not None:
        from charter.worker.metrics import METRICS

        METRICS.serve(metrics_port)
        METRICS.up.set(1)
        log.info("worker metrics on http://127.0.0.1:%d/metrics", metrics_port)
    settings = WorkerSettings(
        concurrency=concurrency,
        batch_size=batch_size,
        lease_seconds=lease_seconds,
        poll_interval=poll_interval,
        grace_seconds=grace,
        block_warning_seconds=block_warning,
        pool_size=pool_size,
        orgs=tuple(orgs),
    )
    worker = Worker(loaded, resolved, settings, actions=registered_actions())
    asyncio.run(worker.serve(install_signals=True))
    if worker.has_running_threads:
        # A sync handler still running past the grace period cannot be interrupted; its
        # task returns through its lease. Do not let the interpreter wait for it.
        logging.shutdown()
        os._exit(0)
    return 0


def deploy_command(*, database_url: str | None, flows: str) -> int:
    loaded = load_flows(flows)
    with connection.connect(target(database_url)) as conn:
        migrations.migrate(conn)
        for flow in loaded:
            result = deploy_flow(conn, flow)
            out.print(
                f"flow '{flow.slug}': {result.status} (version {result.version}, "
                f"{result.version_id})"
            )
            for difference in result.differences:
                out.print(f"  - {difference}")
    return 0


def compile_command(*, flows: str) -> int:
    for flow in load_flows(flows):
        out.print(flow_sql(flow), markup=False, end="")
    return 0


def flows_delete_command(*, database_url: str | None, slug: str, yes: bool, force: bool) -> int:
    resolved = target(database_url)
    mode = detect_mode(resolved)
    if mode == "production" and not force:
        raise ArgumentError(
            f"This is a production database ({resolved.display}): deleting flow '{slug}' "
            "with its runs and evidence cannot be undone. Add --force to confirm that you "
            "mean it (and --yes to skip the question)."
        )
    with Client(resolved.url) as client:
        summary = client.store.perform(flows_ops.flow_summary(slug))
        if summary is None:
            raise FlowNotFoundError(f"There is no flow '{slug}' in {resolved.display}.")
        by_status = ", ".join(f"{n} {s}" for s, n in sorted(summary["runsByStatus"].items()))
        what = f"flow '{slug}': {summary['versions']} versions, {summary['runs']} runs" + (
            f" ({by_status})" if by_status else ""
        )
        if not yes:
            if not sys.stdin.isatty():
                raise ArgumentError(
                    f"Deleting {what} needs confirmation, and there is no terminal to ask "
                    "on; add --yes."
                )
            if not Confirm.ask(f"Delete {what}, with all their evidence?", console=err):
                out.print("nothing deleted")
                return 1
        deleted = client.store.perform(flows_ops.delete_flow(slug))
    out.print(
        f"deleted flow '{slug}': {deleted['versions']} versions and {deleted['runs']} runs "
        "with their tasks and evidence"
    )
    return 0


def recompile_command(*, database_url: str | None, all: bool) -> int:
    with connection.connect(target(database_url)) as conn:
        migrations.migrate(conn)
        versions = perform(conn, artifacts.load_versions(None))
        done = 0
        for version in versions:
            reason = artifacts.problem(version)
            if reason is None and not all:
                continue
            new_hash = perform(conn, artifacts.recompile(version))
            why = f" (was [{reason.code}])" if reason else ""
            out.print(
                f"flow '{version.flow}' v{version.version} ({version.version_id}): "
                f"recompiled{why}, hash {new_hash[:12]}…"
            )
            done += 1
        contracted = perform(conn, artifacts.load_contract_versions())
        for data in contracted:
            reason = artifacts.contract_problem(data)
            if reason is None and not all:
                continue
            new_hash = perform(conn, artifacts.recompile_contracted(data))
            why = f" (was [{reason.code}])" if reason else ""
            out.print(
                f"{data['kind']} '{data['flow']}' v{data['version']} ({data['versionId']}): "
                f"recompiled{why}, hash {new_hash[:12]}…"
            )
            done += 1
    if not done:
        out.print(
            f"all {len(versions)} flow and {len(contracted)} contracted workflow versions "
            "have sound artifacts; nothing to do"
        )
    return 0
