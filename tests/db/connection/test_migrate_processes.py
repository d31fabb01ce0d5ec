"""`charter migrate` from several processes at once, and killed half-way."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from charter.db import migrate as migrations
from tests.integration.helpers import charter_env, run_charter, start_charter


def _records(url):
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT name, count(*) FROM charter.schema_migrations GROUP BY name ORDER BY name"
        ).fetchall()


def test_concurrent_migrate_processes_apply_everything_exactly_once(empty_db_url):
    procs = [
        start_charter("--database-url", empty_db_url, "migrate", env=charter_env())
        for _ in range(5)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 5, results
    outputs = [stdout for stdout, _ in results]
    assert sum("migrated to version" in out for out in outputs) == 1
    assert sum("up to date" in out for out in outputs) == 4
    assert _records(empty_db_url) == sorted((f.name, 1) for f in migrations.load_files())


SLOW_MIGRATOR = """
import sys, psycopg, charter
with psycopg.connect(sys.argv[1], application_name="slow") as conn:
    charter.migrate(conn, source=sys.argv[2])
"""


def test_migrate_killed_half_way_leaves_the_old_version_and_a_rerun_finishes(
    empty_db_url, tmp_path
):
    source = tmp_path / "sql"
    shutil.copytree(Path(str(migrations.sql_dir())), source)
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        old = migrations.migrate(conn, source=source).version
    (source / "migrations" / "9000_half.sql").write_text(
        "CREATE TABLE charter.half_done (id int);\n"
        "SELECT pg_sleep(CASE WHEN current_setting('application_name') = 'slow' "
        "THEN 60 ELSE 0 END);\n"
    )
    (source / "migrations" / "9001_after.sql").write_text("CREATE TABLE charter.after ();\n")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_MIGRATOR, empty_db_url, str(source)])
    with psycopg.connect(empty_db_url, autocommit=True) as watcher:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sleeping = watcher.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'slow' "
                "AND query LIKE '%pg_sleep%' AND state = 'active'"
            ).fetchone()
            if sleeping:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            pytest.fail("the migration never reached its slow statement")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # The server notices the dead client and rolls its transaction back.
        report = migrations.migrate(watcher, source=source)
        assert report.applied == ["migrations/9000_half.sql", "migrations/9001_after.sql"]
        assert report.version == "9001" != old
        assert watcher.execute("SELECT to_regclass('charter.after')").fetchone()[0] is not None
    assert ("migrations/9000_half.sql", 1) in _records(empty_db_url)


def test_killed_migration_rolls_back_completely_before_any_rerun(empty_db_url, tmp_path):
    source = tmp_path / "sql"
    shutil.copytree(Path(str(migrations.sql_dir())), source)
    (source / "migrations" / "9000_half.sql").write_text(
        "CREATE TABLE charter.half_done (id int);\nSELECT pg_sleep(60);\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", SLOW_MIGRATOR, empty_db_url, str(source)])
    with psycopg.connect(empty_db_url, autocommit=True) as watcher:
        deadline = time.monotonic() + 30
        while not watcher.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'slow' "
            "AND query LIKE '%pg_sleep%'"
        ).fetchone():
            assert time.monotonic() < deadline, "migration never started"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while watcher.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'slow'"
        ).fetchone():
            assert time.monotonic() < deadline, "the server kept the dead client's session"
            time.sleep(0.1)
        # Not even the first migration (0001) of that run survived: all or nothing.
        assert watcher.execute("SELECT to_regnamespace('charter')").fetchone() == (None,)


def test_cli_migrate_reports_and_dry_run_changes_nothing(empty_db_url):
    dry = run_charter("--database-url", empty_db_url, "migrate", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would apply migrations/0001_foundation.sql" in dry.stdout
    with psycopg.connect(empty_db_url) as conn:
        assert conn.execute("SELECT to_regnamespace('charter')").fetchone() == (None,)
    done = run_charter("--database-url", empty_db_url, "migrate")
    assert done.returncode == 0
    assert "migrated to version" in done.stdout
    assert "up to date" in run_charter("--database-url", empty_db_url, "migrate").stdout
