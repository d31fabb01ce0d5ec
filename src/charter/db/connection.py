"""Which PostgreSQL charter talks to, and connecting to it with errors people can act on.

Precedence: an explicit URL (``--database-url`` or ``database_url=``), then
``CHARTER_DATABASE_URL``, then charter's embedded server (started on first use).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import socket
import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import conninfo

from charter import settings
from charter.db import embedded
from charter.errors import (
    ConfigurationError,
    DatabaseBusyError,
    DatabaseUnreachableError,
    DatabaseVersionError,
)

log = logging.getLogger("charter.db")

MIN_SERVER_VERSION = 150000  # PostgreSQL 15
DEFAULT_CONNECT_TIMEOUT_S = 5
# libpq (and psycopg after it) never waits less than 2 s, whatever connect_timeout says.
_MIN_CONNECT_TIMEOUT_S = 2
# What PostgreSQL says when no connection slot is free (SQLSTATE 53300, which libpq does not
# pass on for a failed connection, hence the text).
_BUSY_MARKERS = (
    "too many clients already",
    "remaining connection slots are reserved",
    "too many connections for database",
    "too many connections for role",
)
# What libpq says when the peer answered, but not in PostgreSQL's protocol.
_NOT_POSTGRES_MARKERS = ("invalid response to", "expected authentication request from server")


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
    env_url = settings.database_url()
    if env_url:
        return DatabaseTarget(_validated(env_url, "CHARTER_DATABASE_URL"), "CHARTER_DATABASE_URL")
    server = embedded.ensure_running() if start_embedded else embedded.status()
    if server is None:
        return None
    return DatabaseTarget(server.url(), "embedded", server)


def explicit_target(
    database_url: str | None = None, *, source: str = "--database-url"
) -> DatabaseTarget | None:
    """The database chosen instead of the embedded server (an explicit URL, else
    ``CHARTER_DATABASE_URL``), not validated and not contacted; None when charter would use
    its embedded server."""
    if database_url:
        return DatabaseTarget(database_url, source)
    env_url = settings.database_url()
    if env_url:
        return DatabaseTarget(env_url, "CHARTER_DATABASE_URL")
    return None


def how_to_use_embedded(target: DatabaseTarget, command: str | None = None) -> str:
    """How to make ``command`` (any charter command if None) use the embedded server instead
    of ``target``, an imperative clause such as "unset CHARTER_DATABASE_URL"."""
    env_set = settings.database_url() is not None
    parts = [] if target.source == "CHARTER_DATABASE_URL" else [f"leave out {target.source}"]
    if env_set:
        parts.append("unset CHARTER_DATABASE_URL")
    steps = " and ".join(parts)
    if command is None:
        return steps
    runnable = f"env -u CHARTER_DATABASE_URL {command}" if env_set else command
    return f"{steps}: run `{runnable}`"


def connect_timeout() -> int:
    """Seconds to wait for a connection: ``CHARTER_CONNECT_TIMEOUT``, else 5."""
    raw = settings.connect_timeout_text()
    if not raw.strip():
        return DEFAULT_CONNECT_TIMEOUT_S
    try:
        seconds = int(raw.strip())
    except ValueError:
        seconds = 0
    if seconds < _MIN_CONNECT_TIMEOUT_S:
        raise ConfigurationError(
            f"CHARTER_CONNECT_TIMEOUT={raw!r} is not a usable connect timeout. Set it to a "
            f"whole number of seconds, {_MIN_CONNECT_TIMEOUT_S} or more (PostgreSQL's client "
            f"library never waits less than {_MIN_CONNECT_TIMEOUT_S}), or unset it for the "
            f"default of {DEFAULT_CONNECT_TIMEOUT_S}."
        )
    return seconds


def pool_conninfo(target: DatabaseTarget, application_name: str) -> str:
    """The connection string a pool uses: the target's, with charter's connect timeout and
    an application name (both unless the URL sets them)."""
    params = conninfo.conninfo_to_dict(target.url)
    params.setdefault("connect_timeout", str(connect_timeout()))
    params.setdefault("application_name", application_name)
    return conninfo.make_conninfo("", **params)


def connect(
    target: DatabaseTarget | str, *, autocommit: bool = True, **kwargs: Any
) -> psycopg.Connection[Any]:
    """Open a connection, checking the server is PostgreSQL 15 or newer.

    The connect timeout (``CHARTER_CONNECT_TIMEOUT``, unless the URL sets
    ``connect_timeout``) bounds the whole connection, not each address a host name resolves
    to: an address that accepts the connection but never answers uses up the time, and the
    error says so instead of waiting as long again on the next address.
    """
    if isinstance(target, str):
        target = DatabaseTarget(_validated(target, "database_url"), "database_url")
    params = conninfo.conninfo_to_dict(target.url)
    timeout_from_url = "connect_timeout" in params or "connect_timeout" in kwargs
    if not timeout_from_url:
        params["connect_timeout"] = str(connect_timeout())
    params.setdefault("application_name", "charter")
    params.update(kwargs)
    budget = _seconds(params.get("connect_timeout"))
    deadline = time.monotonic() + budget
    failures: list[tuple[dict[str, Any], psycopg.OperationalError]] = []
    conn: psycopg.Connection[Any] | None = None
    for attempt in _attempts(params):
        if failures:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            attempt = {**attempt, "connect_timeout": str(math.ceil(remaining))}
        try:
            conn = psycopg.connect(conninfo.make_conninfo("", **attempt), autocommit=autocommit)
            break
        except psycopg.OperationalError as exc:
            failures.append((attempt, exc))
        except psycopg.ProgrammingError as exc:  # e.g. connect_timeout=soon in the URL
            raise ConfigurationError(
                f"{target.source} has a setting PostgreSQL's client library refuses: "
                f"{_one_line(exc)}. Fix or remove it."
            ) from None
    if conn is None:
        raise _connect_error(target, failures, budget, timeout_from_url)
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


def _validated(url: Any, source: str) -> str:
    if not isinstance(url, str):
        raise ConfigurationError(
            f"{source} must be a connection URL string, not {type(url).__name__}. Use the form "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        )
    try:
        url.encode("utf-8")
        conninfo.conninfo_to_dict(url)
    except UnicodeEncodeError:
        raise ConfigurationError(
            f"{source} is not valid text (it holds bytes that are not UTF-8). Set it to a "
            "connection URL of the form postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        ) from None
    except (psycopg.ProgrammingError, ValueError) as exc:
        raise ConfigurationError(
            f"{source} is not a valid PostgreSQL connection URL ({' '.join(str(exc).split())}). "
            "Use the form "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        ) from None
    return url


def _seconds(value: Any) -> int:
    # As psycopg reads connect_timeout: whole seconds, 0 or less meaning its own default.
    try:
        seconds = int(float(value))
    except (TypeError, ValueError):
        return DEFAULT_CONNECT_TIMEOUT_S
    return max(seconds, _MIN_CONNECT_TIMEOUT_S) if seconds > 0 else 130


def _attempts(params: dict[str, Any]) -> list[dict[str, Any]]:
    """One set of parameters per address to try, in libpq's order, so that one deadline can
    cover them all. Unusual setups are left to psycopg whole."""
    host = str(params.get("host") or "")
    port = str(params.get("port") or "")
    if (
        not host
        or params.get("hostaddr")
        or settings.libpq_default("PGHOSTADDR")
        or params.get("load_balance_hosts") == "random"
        or params.get("target_session_attrs") == "prefer-standby"
    ):
        return [params]
    hosts = host.split(",")
    ports = port.split(",")
    if len(ports) == 1:
        ports *= len(hosts)
    if len(ports) != len(hosts):
        return [params]  # psycopg says what is wrong
    attempts: list[dict[str, Any]] = []
    for one_host, one_port in zip(hosts, ports, strict=True):
        attempt = {**params, "host": one_host, "port": one_port}
        if not one_port:
            del attempt["port"]
        if not one_host or one_host.startswith(("/", "@")) or _is_ip(one_host):
            attempts.append(attempt)
            continue
        try:
            found = socket.getaddrinfo(
                one_host,
                one_port or settings.libpq_default("PGPORT") or "5432",
                proto=socket.IPPROTO_TCP,
                type=socket.SOCK_STREAM,
            )
        except (OSError, UnicodeError):
            attempts.append(attempt)  # psycopg reports the failed lookup
            continue
        for address in dict.fromkeys(str(info[4][0]) for info in found):
            attempts.append({**attempt, "hostaddr": address})
    return attempts or [params]


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _connect_error(
    target: DatabaseTarget,
    failures: list[tuple[dict[str, Any], psycopg.OperationalError]],
    seconds: int,
    timeout_from_url: bool,
) -> DatabaseUnreachableError | DatabaseBusyError:
    reasons = [_one_line(exc) for _, exc in failures]
    for reason in reasons:
        if any(marker in reason for marker in _BUSY_MARKERS):
            return DatabaseBusyError(_busy_message(target, reason))
    for attempt, exc in failures:
        if isinstance(exc, psycopg.errors.ConnectionTimeout):
            return DatabaseUnreachableError(
                _timeout_message(target, attempt, seconds, timeout_from_url)
            )
    for (attempt, _), reason in zip(failures, reasons, strict=True):
        if any(marker in reason for marker in _NOT_POSTGRES_MARKERS):
            detail = reason.rsplit(" failed: ", 1)[-1].rstrip(".")
            return DatabaseUnreachableError(
                f"charter could not connect to PostgreSQL at {target.display} "
                f"(from {target.source}): the server at {_address(attempt)} answered, but not "
                f"as PostgreSQL ({detail}) — is this PostgreSQL's port? "
                f"{_check_target_fix(target)}"
            )
    return DatabaseUnreachableError(_unreachable_message(target, "; ".join(dict.fromkeys(reasons))))


def _one_line(exc: psycopg.Error) -> str:
    return " ".join(str(exc).split())


def _address(attempt: dict[str, Any]) -> str:
    host = str(
        attempt.get("hostaddr") or attempt.get("host") or settings.libpq_default("PGHOST") or ""
    )
    port = str(attempt.get("port") or settings.libpq_default("PGPORT") or "5432")
    if not host:
        return f"libpq's default Unix socket (port {port})"
    if host.startswith(("/", "@")):
        return f"the Unix socket in {host} (port {port})"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _timeout_message(
    target: DatabaseTarget, attempt: dict[str, Any], seconds: int, timeout_from_url: bool
) -> str:
    where = _address(attempt)
    setting = "connect_timeout in the URL" if timeout_from_url else "CHARTER_CONNECT_TIMEOUT"
    slow = f"if it is PostgreSQL and only slow, raise {setting} (now {seconds} s)."
    host = str(attempt.get("hostaddr") or attempt.get("host") or "")
    port = str(attempt.get("port") or settings.libpq_default("PGPORT") or "5432")
    accepted: bool | None = None
    if host and not host.startswith(("/", "@")) and "," not in host and port.isdigit():
        # Did the connection itself succeed? Asked again, briefly, to say what went wrong.
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                accepted = True
        except OSError:
            accepted = False
    if accepted:
        what = (
            f"the server at {where} accepted the connection but did not answer as PostgreSQL "
            f"within {seconds} s — is this PostgreSQL's port? Something other than "
            "PostgreSQL may listen there. "
        )
    elif accepted is False:
        what = (
            f"nothing at {where} accepted the connection within {seconds} s: the host may "
            "be down, or a firewall may drop the packets. "
        )
    else:
        what = f"{where} did not answer within {seconds} s. "
    return (
        f"charter could not connect to PostgreSQL at {target.display} "
        f"(from {target.source}): {what}{_check_target_fix(target)} Or, {slow}"
    )


def _check_target_fix(target: DatabaseTarget) -> str:
    if target.source == "embedded":
        return "Run `charter db status` to check charter's embedded server."
    return (
        f"Check the host and port in {target.source} (PostgreSQL usually listens on 5432), "
        "or unset CHARTER_DATABASE_URL to use charter's embedded PostgreSQL."
    )


def _busy_message(target: DatabaseTarget, reason: str) -> str:
    said = reason.rsplit("FATAL:", 1)[-1].strip().rstrip(".")
    if "for database" in said:
        limit = (
            "the database's connection limit allows (ALTER DATABASE … CONNECTION LIMIT, "
            "a limit below the server's max_connections)"
        )
        raise_it = "raise the database's CONNECTION LIMIT"
    elif "for role" in said:
        limit = (
            "the role's connection limit allows (ALTER ROLE … CONNECTION LIMIT, a limit "
            "below the server's max_connections)"
        )
        raise_it = "raise the role's CONNECTION LIMIT"
    elif "reserved" in said:
        limit = (
            "max_connections leaves to this role (the rest are reserved by "
            "superuser_reserved_connections and reserved_connections)"
        )
        raise_it = "raise max_connections on the server (it takes effect at its next restart)"
    else:
        limit = "the server's max_connections allows"
        raise_it = "raise max_connections on the server (it takes effect at its next restart)"
    whose = (
        "charter's embedded server is shared by every charter process of this user, so look "
        "for idle charter workers, clients and psql sessions. "
        if target.source == "embedded"
        else ""
    )
    return (
        f"PostgreSQL at {target.display} (from {target.source}) has no free connection slot "
        f"({said}): other clients hold every slot that {limit}. {whose}Close idle clients "
        "(pg_stat_activity lists them), lower the pool sizes of charter workers and clients, "
        f"or {raise_it}; then try again."
    )


def _unreachable_message(target: DatabaseTarget, reason: str) -> str:
    reason = reason.rstrip(".")
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
