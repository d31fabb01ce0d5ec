"""Schema migrations: ``charter migrate`` and ``charter.migrate(conn)``.

Two kinds of SQL file ship in ``charter/db/sql`` and are applied by this module:

* ``migrations/NNNN_name.sql`` — versioned; applied once, in order, and never edited after
  release (a changed checksum is refused).
* ``functions/*.sql`` then ``triggers/*.sql`` — repeatable, one object per file, written with
  ``CREATE OR REPLACE``; (re)applied whenever the file's checksum changes, and all of them
  after any new migration (which may have dropped a function to change its signature).
  A file renamed or split is applied under its new name, and the ledger forgets the old
  names (their objects live on in the new files).
* ``grants/*.sql`` — repeatable, applied last, and again whenever anything else was
  applied: a function created afresh must not keep PostgreSQL's EXECUTE for PUBLIC.

``schema/*.sql`` and ``types/*.sql`` (composite types) are not applied: they describe the
tables and types the migrations make, as one file per object (a test builds a database from
them and compares it with a migrated one). A type changes like a table, by a migration.

Only a role that may change the schema migrates it (:func:`ensure_current`); the
least-privilege roles check instead that it is current and name the command otherwise.

A run is one transaction under an advisory lock: concurrent runs wait for each other, and a
run killed half-way leaves the database exactly at the old version.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import psycopg

from charter.db.queries import query
from charter.errors import (
    MigrationChecksumError,
    MigrationError,
    MigrationUnknownError,
    SchemaNotCurrentError,
)

log = logging.getLogger("charter.migrate")

_VERSIONED = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_REPEATABLE_DIRS = ("functions", "triggers", "grants")


@dataclass(frozen=True)
class SqlFile:
    name: str  # relative to the sql directory, e.g. "migrations/0001_foundation.sql"
    kind: str  # "versioned" or "repeatable"
    version: str | None
    sql: str
    checksum: str


@dataclass
class MigrationReport:
    applied: list[str] = field(default_factory=list)
    reapplied: list[str] = field(default_factory=list)
    version: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.applied or self.reapplied)


def sql_dir() -> Traversable:
    return resources.files("charter.db").joinpath("sql")


def load_files(source: Traversable | Path | str | None = None) -> list[SqlFile]:
    """Every migration, then every repeatable file, in the order they are applied."""
    root = sql_dir() if source is None else Path(source) if isinstance(source, str) else source
    files: list[SqlFile] = []
    seen_versions: dict[str, str] = {}
    for entry in _sorted_sql(root.joinpath("migrations")):
        match = _VERSIONED.match(entry.name)
        if match is None:
            raise MigrationError(
                f"migrations/{entry.name} is not named NNNN_description.sql (four digits, "
                "then lower-case words joined by _). Rename it."
            )
        version = match.group(1)
        if version in seen_versions:
            raise MigrationError(
                f"migrations/{entry.name} and migrations/{seen_versions[version]} share "
                f"version {version}. Give the newer one the next free number."
            )
        seen_versions[version] = entry.name
        files.append(_sql_file(f"migrations/{entry.name}", "versioned", version, entry))
    for directory in _REPEATABLE_DIRS:
        for entry in _sorted_sql(root.joinpath(directory)):
            files.append(_sql_file(f"{directory}/{entry.name}", "repeatable", None, entry))
    return files


def migrate(
    conn: psycopg.Connection[Any], *, source: Traversable | Path | str | None = None
) -> MigrationReport:
    """Install or upgrade schema ``charter``. Idempotent and safe to run concurrently."""
    files = load_files(source)
    report = MigrationReport()
    with conn.transaction():
        # If this client dies mid-way, the server notices within a second and rolls back.
        conn.execute("SET LOCAL client_connection_check_interval = '1s'")
        conn.execute(query("migrate_lock"))
        applied = _applied(conn)
        _check_applied(files, applied)
        newest = max((a["version"] for a in applied.values() if a["version"]), default=None)
        for file in files:
            record = applied.get(file.name)
            if file.kind == "versioned":
                if record is not None:
                    continue
                if newest is not None and file.version is not None and file.version < newest:
                    raise MigrationError(
                        f"{file.name} is not applied, but the newer migration {newest} is. "
                        "Migrations must be applied in order: give it a number above "
                        f"{newest}."
                    )
            elif (
                record is not None
                and record["checksum"] == file.checksum
                and not report.applied  # a migration may have dropped what the file makes
                and not (file.name.startswith("grants/") and report.reapplied)
            ):
                continue
            _apply(conn, file)
            (report.applied if file.kind == "versioned" else report.reapplied).append(file.name)
        shipped = [f.name for f in files if f.kind == "repeatable"]
        conn.execute(query("forget_unshipped_files"), {"shipped": shipped})
        report.version = current_version(conn)
        if report.version is not None:  # the partitions of this month and the next ones
            conn.execute(query("ensure_partitions"))
    for name in report.applied:
        log.info("applied migration %s", name)
    if report.reapplied:
        log.info("applied %d function and trigger files", len(report.reapplied))
    return report


def ensure_current(conn: psycopg.Connection[Any]) -> MigrationReport | None:
    """Migrate when this role may change the schema; otherwise require it to be current
    (SchemaNotCurrentError naming `charter migrate`). None when nothing was migrated."""
    if can_migrate(conn):
        return migrate(conn)
    require_current(conn)
    return None


def can_migrate(conn: psycopg.Connection[Any]) -> bool:
    """Whether the connected role owns schema charter (or may create it)."""
    row = conn.execute(query("can_migrate")).fetchone()
    return bool(row and row[0])


def require_current(conn: psycopg.Connection[Any]) -> None:
    """SchemaNotCurrentError unless every file this charter ships is applied as shipped."""
    try:
        with conn.transaction():
            row = conn.execute(query("schema_state")).fetchone()
        state = {entry["name"]: entry for entry in (row[0] if row else [])}
    except psycopg.Error:
        state = {}  # no schema, or one older than schema_state()
    differing = [
        f.name for f in load_files() if state.get(f.name, {}).get("checksum") != f.checksum
    ]
    if differing:
        user = conn.execute("SELECT current_user").fetchone()
        raise SchemaNotCurrentError(
            f"Schema charter is not current for this charter ({_charter_version()}): "
            f"{len(differing)} files are missing or differ (first: {differing[0]}), and role "
            f"{user[0] if user else '?'} may not migrate it. Run `charter migrate` as the "
            "schema's owner (its CHARTER_DATABASE_URL), then start again."
        )


def pending(
    conn: psycopg.Connection[Any], *, source: Traversable | Path | str | None = None
) -> list[SqlFile]:
    """The files that :func:`migrate` would apply now (checks checksums as it would)."""
    files = load_files(source)
    applied = _applied(conn)
    _check_applied(files, applied)
    return [
        f
        for f in files
        if f.name not in applied
        or (f.kind == "repeatable" and applied[f.name]["checksum"] != f.checksum)
    ]


def current_version(conn: psycopg.Connection[Any]) -> str | None:
    """The newest applied migration's version, or None when schema charter is absent."""
    versions = [a["version"] for a in _applied(conn).values() if a["version"]]
    return max(versions, default=None)


def _applied(conn: psycopg.Connection[Any]) -> dict[str, dict[str, Any]]:
    present = conn.execute(query("migrations_table_exists")).fetchone()
    if not present or not present[0]:
        return {}
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        return {row["name"]: row for row in cur.execute(query("applied_migrations"))}


def _check_applied(files: list[SqlFile], applied: dict[str, dict[str, Any]]) -> None:
    known = {f.name: f for f in files}
    for name, record in applied.items():
        if record["kind"] != "versioned":
            continue
        file = known.get(name)
        if file is None:
            raise MigrationUnknownError(
                f"The database has migration {name} applied, which this charter "
                f"({_charter_version()}) does not ship: a newer charter migrated it. "
                "Upgrade charter to the version the database was migrated with."
            )
        if file.checksum != record["checksum"]:
            raise MigrationChecksumError(
                f"{name} was changed after it was applied (applied checksum "
                f"{record['checksum'][:12]}…, file now {file.checksum[:12]}…). Applied "
                "migrations must never change: restore the file as released and put the "
                "change in a new migration file with the next number."
            )


def _apply(conn: psycopg.Connection[Any], file: SqlFile) -> None:
    try:
        with conn.transaction():  # a savepoint, so the error names this file alone
            conn.execute(file.sql)
    except psycopg.Error as exc:
        detail = exc.diag.message_primary or str(exc)
        raise MigrationError(
            f"{file.name} failed: {detail}. Nothing was changed; fix the file and run "
            "`charter migrate` again."
        ) from exc
    conn.execute(
        query("record_migration"),
        {
            "name": file.name,
            "kind": file.kind,
            "version": file.version,
            "checksum": file.checksum,
            "charter_version": _charter_version(),
        },
    )


def _sorted_sql(directory: Traversable | Path) -> list[Traversable | Path]:
    if not directory.is_dir():
        return []
    return sorted((e for e in directory.iterdir() if e.name.endswith(".sql")), key=lambda e: e.name)


def _sql_file(name: str, kind: str, version: str | None, entry: Traversable | Path) -> SqlFile:
    # Line endings are normalised so a checkout with CRLF does not look "changed".
    text = entry.read_bytes().replace(b"\r\n", b"\n").decode("utf-8")
    checksum = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return SqlFile(name=name, kind=kind, version=version, sql=text, checksum=checksum)


def _charter_version() -> str:
    try:
        return metadata.version("charter")
    except metadata.PackageNotFoundError:
        return "unknown"
