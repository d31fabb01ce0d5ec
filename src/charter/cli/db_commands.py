"""`charter db status|url|start|stop`, `charter migrate` and `charter citus distribute`."""

from __future__ import annotations

import argparse

from rich.markup import escape

from charter.cli.common import EXIT_NOT_RUNNING, err, out, target
from charter.cli.options import flag
from charter.db import citus, connection, embedded
from charter.db import migrate as migrations
from charter.errors import ConfigurationError


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser("migrate", help="install or upgrade schema charter")
    flag(migrate, "--dry-run", help="list what would be applied, change nothing")
    migrate.set_defaults(handler=migrate_schema)

    cluster = commands.add_parser("citus", help="charter on a Citus cluster")
    cluster_actions = cluster.add_subparsers(title="citus commands", required=True,
                                             metavar="ACTION")  # fmt: skip
    distribute = cluster_actions.add_parser(
        "distribute",
        help="distribute the migrated schema by org (run on the coordinator after migrate)",
    )
    distribute.add_argument(
        "--shard-count", type=int, default=None,
        help="shards per distributed table (Citus's default otherwise)",
    )  # fmt: skip
    distribute.set_defaults(handler=citus_distribute)

    db = commands.add_parser("db", help="the database charter uses")
    actions = db.add_subparsers(title="db commands", required=True, metavar="ACTION")
    actions.add_parser("status", help="where the database is and whether it runs").set_defaults(
        handler=db_status
    )
    actions.add_parser(
        "url", help="print the connection URL (starts the embedded server if needed)"
    ).set_defaults(handler=db_url)
    actions.add_parser("start", help="start the embedded server").set_defaults(handler=db_start)
    actions.add_parser("stop", help="stop the embedded server").set_defaults(handler=db_stop)


def migrate_schema(*, database_url: str | None, dry_run: bool) -> int:
    with connection.connect(target(database_url)) as conn:
        if dry_run:
            files = migrations.pending(conn)
            for file in files:
                out.print(f"would apply {file.name}")
            if not files:
                out.print("schema charter is up to date")
            return 0
        report = migrations.migrate(conn)
        if report.changed and citus.is_distributed(conn):
            # The files just applied are SQL again and new: put them on every node.
            with conn.transaction():
                citus.distribute(conn)
    if report.changed:
        out.print(
            f"schema charter migrated to version {report.version} "
            f"({len(report.applied)} migrations, {len(report.reapplied)} function and "
            "trigger files applied)"
        )
    else:
        out.print(f"schema charter is up to date at version {report.version}")
    return 0


def citus_distribute(*, database_url: str | None, shard_count: int | None) -> int:
    with connection.connect(target(database_url)) as conn, conn.transaction():
        done = citus.distribute(conn, shard_count=shard_count)
    out.print(
        f"distributed by org: {len(done.distributed)} tables; reference tables: "
        f"{len(done.reference)}; functions on every node: {len(done.ported)} ported to "
        f"PL/pgSQL, {len(done.functions)} delegated to the node of their org; already in "
        f"place: {len(done.already)}"
    )
    for line in done.coordinator_functions:
        err.print(f"kept on the coordinator: {escape(line)}")
    return 0


def db_status(*, database_url: str | None) -> int:
    resolved = connection.resolve(database_url, start_embedded=False)
    if resolved is None:
        data_dir = embedded.default_data_dir()
        state = "initialized" if (data_dir / "PG_VERSION").exists() else "not created yet"
        out.print(
            f"embedded PostgreSQL: not running\ndata directory: {data_dir} ({state})\n"
            "start it with `charter db start` (any charter command starts it on use)"
        )
        return EXIT_NOT_RUNNING
    with connection.connect(resolved) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        schema_version = migrations.current_version(conn)
    lines = [
        f"database: {resolved.display} ({resolved.source})",
        f"PostgreSQL {version[0] if version else '?'}",
    ]
    if resolved.embedded is not None:
        lines += [
            f"embedded server: running (pid {resolved.embedded.pid})",
            f"data directory: {resolved.embedded.data_dir}",
            f"log: {resolved.embedded.log_file}",
        ]
    lines.append(
        f"schema charter: version {schema_version}"
        if schema_version
        else "schema charter: not installed (run `charter migrate`)"
    )
    out.print("\n".join(lines))
    return 0


def db_url(*, database_url: str | None) -> int:
    out.print(target(database_url).url, markup=False)
    return 0


def db_start(*, database_url: str | None) -> int:
    server = embedded.ensure_running()
    out.print(
        f"embedded PostgreSQL {server.version} running (pid {server.pid}) in {server.data_dir}"
    )
    elsewhere = connection.explicit_target(database_url)
    if elsewhere is not None:
        err.print(
            f"[bold yellow]note[/] the database charter targets here is "
            f"{escape(elsewhere.display)} (from {escape(elsewhere.source)}), not this embedded "
            f"server; {escape(connection.how_to_use_embedded(elsewhere))} to use it."
        )
    return 0


def db_stop(*, database_url: str | None) -> int:
    elsewhere = connection.explicit_target(database_url)
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
