"""Reported trouble with the database, each reproduced on real servers and processes:
`charter db stop` aimed at another database, CHARTER_EMBEDDED_PORT ignored by a running
server, a port where something other than PostgreSQL listens, and a server without a free
connection slot."""

from __future__ import annotations

import os
import selectors
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from charter.db import connection, embedded
from charter.errors import (
    DatabaseBusyError,
    DatabaseError,
    DatabaseUnreachableError,
    EmbeddedPortMismatchError,
)
from tests.integration.helpers import charter_env, run_charter

pytestmark = pytest.mark.slow
FAST = {"fsync": "off"}
# Another database the user points charter at; never contacted by `db stop` or `db start`.
ELSEWHERE = "postgresql://someone:s3cret@db.example.invalid:5433/app"
ELSEWHERE_SHOWN = "someone@db.example.invalid:5433/app"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pg"
    yield path
    embedded.stop(path)


def free_ports(count: int) -> list[int]:
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:  # all bound at once, so the ports differ
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def with_user(url: str, user: str, password: str) -> str:
    params = conninfo.conninfo_to_dict(url)
    params.update(user=user, password=password)
    return conninfo.make_conninfo("", **params)


class FakeServer:
    """A TCP server on 127.0.0.1 that is not PostgreSQL: it accepts connections and either
    never says a word or answers whatever it receives with ``reply``. ``requests`` counts
    the connections that sent it something (a PostgreSQL client always speaks first)."""

    def __init__(self, reply: bytes | None = None) -> None:
        self.reply = reply
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._listener.close()

    def _serve(self) -> None:
        clients: dict[socket.socket, bool] = {}  # socket -> has sent something
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=0.05):
                    sock: Any = key.fileobj
                    if sock is self._listener:
                        client, _ = self._listener.accept()
                        clients[client] = False
                        selector.register(client, selectors.EVENT_READ)
                        continue
                    try:
                        data = sock.recv(4096)
                    except OSError:  # reset by the client
                        data = b""
                    if not data:
                        selector.unregister(sock)
                        sock.close()
                        del clients[sock]
                        continue
                    if not clients[sock]:
                        clients[sock] = True
                        self.requests += 1
                    if self.reply is not None:
                        sock.sendall(self.reply)
            for client in clients:
                client.close()


@pytest.fixture
def silent_server() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.close()


# 1. `charter db stop` / `db start` while the user targets another database


@pytest.mark.parametrize("given_as", ["CHARTER_DATABASE_URL", "--database-url"])
def test_db_stop_aimed_at_another_database_stops_nothing_and_says_why(data_dir, given_as):
    server = embedded.ensure_running(data_dir, settings=FAST)
    if given_as == "CHARTER_DATABASE_URL":
        env = charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_DATABASE_URL=ELSEWHERE)
        result = run_charter("db", "stop", env=env)
        how = "unset CHARTER_DATABASE_URL"
    else:
        env = charter_env(CHARTER_DATA_DIR=str(data_dir))
        result = run_charter("--database-url", ELSEWHERE, "db", "stop", env=env)
        how = "leave out --database-url"
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [CONFIG_INVALID] ")
    assert "only manages charter's embedded PostgreSQL server" in message
    assert f"{ELSEWHERE_SHOWN} (from {given_as})" in message
    assert "Nothing was stopped" in message
    assert how in message
    assert "s3cret" not in message
    running = embedded.status(data_dir)
    assert running is not None and running.pid == server.pid
    # The way out the message gives: without the URL, `db stop` stops the embedded server.
    stopped = run_charter("db", "stop", env=charter_env(CHARTER_DATA_DIR=str(data_dir)))
    assert stopped.returncode == 0, stopped.stderr
    assert embedded.status(data_dir) is None


def test_db_start_aimed_at_another_database_starts_the_embedded_one_and_says_so(data_dir):
    env = charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_DATABASE_URL=ELSEWHERE)
    result = run_charter("db", "start", env=env)
    assert result.returncode == 0, result.stderr
    assert "running" in result.stdout
    assert embedded.status(data_dir) is not None
    # (As root, a first start may also say which directories it let the server's user pass.)
    said = [line for line in result.stderr.splitlines() if "o+x" not in line]
    note = one_line("\n".join(said))
    assert f"{ELSEWHERE_SHOWN} (from CHARTER_DATABASE_URL), not this embedded server" in note
    assert "unset CHARTER_DATABASE_URL" in note
    assert "s3cret" not in note


# 2. CHARTER_EMBEDDED_PORT while the embedded server already runs


def test_a_port_asked_of_a_running_socket_only_server_is_a_clear_error(data_dir):
    server = embedded.ensure_running(data_dir, settings=FAST)
    [port] = free_ports(1)
    with pytest.raises(EmbeddedPortMismatchError) as caught:
        embedded.ensure_running(data_dir, port=port)
    assert "Unix socket only" in caught.value.message
    env = charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_EMBEDDED_PORT=str(port))
    result = run_charter("db", "url", env=env)
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [EMBEDDED_PORT_MISMATCH] ")
    assert "listens on its Unix socket only" in message
    assert f"CHARTER_EMBEDDED_PORT={port} asks for 127.0.0.1:{port}" in message
    assert "`charter db stop`" in message and "unset CHARTER_EMBEDDED_PORT" in message
    running = embedded.status(data_dir)
    assert running is not None and running.pid == server.pid and not running.tcp
    # The fix the message gives works: stop, then run again.
    assert run_charter("db", "stop", env=env).returncode == 0
    again = run_charter("db", "url", env=env)
    assert again.returncode == 0, again.stderr
    assert f"127.0.0.1:{port}" in again.stdout


def test_another_port_than_the_running_servers_is_a_clear_error_the_same_port_is_not(data_dir):
    port, other = free_ports(2)
    server = embedded.ensure_running(data_dir, port=port, settings=FAST)
    env = charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_EMBEDDED_PORT=str(other))
    result = run_charter("db", "url", env=env)
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [EMBEDDED_PORT_MISMATCH] ")
    assert f"listens on 127.0.0.1:{port}" in message
    assert f"CHARTER_EMBEDDED_PORT={other} asks for 127.0.0.1:{other}" in message
    assert f"set CHARTER_EMBEDDED_PORT={port} or unset it" in message
    for same in (str(port), None):  # the same port, or none asked: reused without a word
        reused = run_charter(
            "db", "url", env=charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_EMBEDDED_PORT=same)
        )
        assert reused.returncode == 0, reused.stderr
        assert f"127.0.0.1:{port}" in reused.stdout
        assert "error" not in reused.stderr
    assert embedded.ensure_running(data_dir, port=port).pid == server.pid


# 3. A port where something other than PostgreSQL listens


def test_a_silent_server_is_named_as_not_answering_as_postgresql(silent_server):
    url = f"postgresql://u:s3cret@127.0.0.1:{silent_server.port}/x"
    env = charter_env(CHARTER_DATABASE_URL=url, CHARTER_CONNECT_TIMEOUT="2")
    result = run_charter("db", "status", env=env)
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [DATABASE_UNREACHABLE] ")
    assert (
        f"the server at 127.0.0.1:{silent_server.port} accepted the connection but did not "
        "answer as PostgreSQL within 2 s — is this PostgreSQL's port?"
    ) in message
    assert "raise CHARTER_CONNECT_TIMEOUT (now 2 s)" in message
    assert "s3cret" not in message
    assert silent_server.requests == 1


def test_addresses_share_one_connect_timeout(silent_server, monkeypatch):
    # Two addresses for one silent server: the first uses up the whole timeout, so the
    # second is not tried (it would double the wait, as a name resolving to ::1 and
    # 127.0.0.1 would); an address that fails at once leaves the time to the next one.
    monkeypatch.setenv("CHARTER_CONNECT_TIMEOUT", "2")
    port = silent_server.port
    with pytest.raises(DatabaseUnreachableError) as caught:
        connection.connect(f"postgresql://u@/x?host=127.0.0.1,127.0.0.1&port={port}")
    assert f"127.0.0.1:{port} accepted the connection but did not answer" in caught.value.message
    assert silent_server.requests == 1
    with pytest.raises(DatabaseUnreachableError) as caught:
        connection.connect(f"postgresql://u@/x?host=127.0.0.1,127.0.0.1&port=1,{port}")
    assert f"127.0.0.1:{port} accepted the connection but did not answer" in caught.value.message
    assert silent_server.requests == 2


def test_a_server_that_answers_but_not_as_postgresql_is_named_at_once():
    server = FakeServer(reply=b"-ERR unknown command\r\n")  # as Redis answers
    try:
        url = f"postgresql://u@127.0.0.1:{server.port}/x"
        result = run_charter("db", "status", env=charter_env(CHARTER_DATABASE_URL=url))
    finally:
        server.close()
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [DATABASE_UNREACHABLE] ")
    assert f"the server at 127.0.0.1:{server.port} answered, but not as PostgreSQL" in message
    assert "is this PostgreSQL's port?" in message


def test_the_connect_timeout_defaults_to_5_s_and_follows_the_setting(db_url, monkeypatch):
    monkeypatch.delenv("CHARTER_CONNECT_TIMEOUT", raising=False)
    with connection.connect(db_url) as conn:
        assert conn.info.get_parameters()["connect_timeout"] == "5"
    monkeypatch.setenv("CHARTER_CONNECT_TIMEOUT", "7")
    with connection.connect(db_url) as conn:
        assert conn.info.get_parameters()["connect_timeout"] == "7"
    own = conninfo.make_conninfo(db_url, connect_timeout=9)
    with connection.connect(own) as conn:  # the URL's own connect_timeout wins
        assert conn.info.get_parameters()["connect_timeout"] == "9"


@pytest.mark.parametrize("value", ["soon", "0", "1", "-5", "2.5"])
def test_a_bad_connect_timeout_is_a_clear_error(db_url, value):
    env = charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_CONNECT_TIMEOUT=value)
    result = run_charter("db", "status", env=env)
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith(f"error [CONFIG_INVALID] CHARTER_CONNECT_TIMEOUT={value!r} ")
    assert "whole number of seconds, 2 or more" in message


# 4. No free connection slot


@pytest.fixture
def limited_role(databases) -> Iterator[tuple[str, str]]:
    """A login role of this test only, on the test server: (name, password)."""
    name = f"charter_t_busy_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    password = "busy-s3cret"
    with psycopg.connect(databases.admin_url, autocommit=True) as admin:
        try:
            admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("the test server's user may not create roles")
        try:
            yield name, password
        finally:
            admin.execute(f"DROP ROLE IF EXISTS {name}")


def assert_busy(error: DatabaseBusyError, said: str) -> None:
    assert isinstance(error, DatabaseError)
    assert error.code == "DATABASE_TOO_MANY_CONNECTIONS"
    assert said in error.message
    assert "max_connections" in error.message
    assert "other clients hold every slot" in error.message
    assert "Close idle clients" in error.message
    assert "db stop" not in error.message
    assert "s3cret" not in error.message


def test_a_role_at_its_connection_limit_is_busy_not_unreachable(databases, db_url, limited_role):
    name, password = limited_role
    with psycopg.connect(databases.admin_url, autocommit=True) as admin:
        admin.execute(f"ALTER ROLE {name} CONNECTION LIMIT 1")
    url = with_user(db_url, name, password)
    with psycopg.connect(url):  # holds the role's only slot
        with pytest.raises(DatabaseBusyError) as caught:
            connection.connect(url)
        assert_busy(caught.value, f'too many connections for role "{name}"')
        result = run_charter("db", "status", env=charter_env(CHARTER_DATABASE_URL=url))
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [DATABASE_TOO_MANY_CONNECTIONS] ")
    assert "db stop" not in message and password not in message


def test_a_database_at_its_connection_limit_is_busy(databases, db_url, limited_role):
    name, password = limited_role
    dbname = conninfo.conninfo_to_dict(db_url)["dbname"]
    with psycopg.connect(databases.admin_url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{dbname}" CONNECTION LIMIT 1')
    url = with_user(db_url, name, password)
    # The first connection holds the database's only slot (superusers are exempt).
    with psycopg.connect(url), pytest.raises(DatabaseBusyError) as caught:
        connection.connect(url)
    assert_busy(caught.value, f'too many connections for database "{dbname}"')


def test_a_full_embedded_server_is_busy_and_charter_db_does_not_advise_stopping_it(data_dir):
    server = embedded.ensure_running(
        data_dir,
        settings={**FAST, "max_connections": "3", "superuser_reserved_connections": "1"},
    )
    with psycopg.connect(server.url(), autocommit=True) as first:
        first.execute("CREATE ROLE app LOGIN")
        with psycopg.connect(server.url()):
            # Two slots taken; the third is reserved for superusers.
            with pytest.raises(DatabaseBusyError) as caught:
                connection.connect(server.url().replace("postgres@", "app@"))
            assert_busy(caught.value, "remaining connection slots are reserved")
            with psycopg.connect(server.url()):  # and now every slot
                with pytest.raises(DatabaseBusyError) as caught:
                    connection.connect(server.url())
                assert_busy(caught.value, "too many clients already")
                result = run_charter(
                    "db", "status", env=charter_env(CHARTER_DATA_DIR=str(data_dir))
                )
    assert result.returncode == 1
    message = one_line(result.stderr)
    assert message.startswith("error [DATABASE_TOO_MANY_CONNECTIONS] ")
    assert "too many clients already" in message
    assert "(from embedded)" in message and "idle charter workers" in message
    assert "db stop" not in message
    running = embedded.status(data_dir)
    assert running is not None and running.pid == server.pid
