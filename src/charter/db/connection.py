"""Which PostgreSQL charter talks to, and connecting to it with errors people can act on.

Precedence: an explicit URL (``--database-url`` or ``database_url=``), then
``CHARTER_DATABASE_URL``, then charter's embedded server (started on first use).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import conninfo

from charter.db import embedded
from charter.errors import ConfigurationError, DatabaseUnreachableError, DatabaseVersionError

log = logging.getLogger("charter.db")

MIN_SERVER_VERSION = 150000  # PostgreSQL 15
_CONNECT_TIMEOUT_S = "10"


@dataclass(frozen=True)
class DatabaseTarget:
    url: str
    source: str  # "--database-url", "CHARTER_DATABASE_URL" or "embedded"
    embedded: embedded.EmbeddedServer | None = None

    @property
    def display(self) -> str:
        return redact(self.url)


def resolve(
    database_url: str | None = None, *, start_embedded: bool = True, source: str = "--database-url"
) -> DatabaseTarget | None:
    """Pick the database to use. Returns None only when nothing is configured and
    ``start_embedded`` is False while the embedded server is not running."""
    if database_url:
        return DatabaseTarget(_validated(database_url, source), source)
    env_url = os.environ.get("CHARTER_DATABASE_URL")
    if env_url:
        return DatabaseTarget(_validated(env_url, "CHARTER_DATABASE_URL"), "CHARTER_DATABASE_URL")
    server = embedded.ensure_running() if start_embedded else embedded.status()
    if server is None:
        return None
    return DatabaseTarget(server.url(), "embedded", server)


def connect(
    target: DatabaseTarget | str, *, autocommit: bool = True, **kwargs: Any
) -> psycopg.Connection[Any]:
    """Open a connection, checking the server is PostgreSQL 15 or newer."""
    if isinstance(target, str):
        target = DatabaseTarget(_validated(target, "database_url"), "database_url")
    params = conninfo.conninfo_to_dict(target.url)
    params.setdefault("connect_timeout", _CONNECT_TIMEOUT_S)
    params.setdefault("application_name", "charter")
    params.update(kwargs)
    try:
        conn = psycopg.connect(conninfo.make_conninfo("", **params), autocommit=autocommit)
    except psycopg.OperationalError as exc:
        raise DatabaseUnreachableError(_unreachable_message(target, exc)) from None
    try:
        check_server_version(conn.info.server_version, target.display)
    except DatabaseVersionError:
        conn.close()
        raise
    return conn


def check_server_version(version_num: int, where: str) -> None:
    if version_num < MIN_SERVER_VERSION:
        major = version_num // 10000
        raise DatabaseVersionError(
            f"The PostgreSQL server at {where} is version {major}; charter needs "
            "PostgreSQL 15 or newer. Upgrade the server, point CHARTER_DATABASE_URL at a "
            "newer one, or unset it to use charter's embedded PostgreSQL."
        )


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparseable database URL>"
    if "password" in params:
        params["password"] = "***"
    host = params.get("host", "localhost")
    port = params.get("port", "5432")
    return f"{params.get('user', '')}@{host}:{port}/{params.get('dbname', '')}"


def _validated(url: str, source: str) -> str:
    try:
        conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(
            f"{source} is not a valid PostgreSQL connection URL ({' '.join(str(exc).split())}). "
            "Use the form "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        ) from None
    return url


def _unreachable_message(target: DatabaseTarget, exc: psycopg.OperationalError) -> str:
    reason = " ".join(str(exc).split()).rstrip(".")
    if not reason.endswith(("?", "!")):
        reason += "."
    if target.source == "embedded":
        fix = (
            "Run `charter db status` to check charter's embedded server, or "
            "`charter db stop` and try again."
        )
    else:
        fix = (
            f"Check that the server is running and that {target.source} is right, or "
            "unset CHARTER_DATABASE_URL to use charter's embedded PostgreSQL."
        )
    return (
        f"charter could not connect to PostgreSQL at {target.display} "
        f"(from {target.source}): {reason} {fix}"
    )
