import re
import shutil
from pathlib import Path

import psycopg
import pytest

import charter
from charter.db import migrate as migrations
from charter.errors import MigrationChecksumError, MigrationError, MigrationUnknownError


@pytest.fixture
def sql_copy(tmp_path: Path) -> Path:
    """A private copy of the shipped SQL files, for tests that edit them."""
    target = tmp_path / "sql"
    shutil.copytree(Path(str(migrations.sql_dir())), target)
    return target


def _objects(conn):
    return conn.execute(
        "SELECT name, checksum, applied_at FROM charter.schema_migrations ORDER BY name"
    ).fetchall()


def test_migrate_installs_everything_once_and_then_does_nothing(empty_db_url):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        first = charter.migrate(conn)
        assert first.applied == [f.name for f in migrations.load_files() if f.kind == "versioned"]
        assert first.reapplied == [
            f.name for f in migrations.load_files() if f.kind == "repeatable"
        ]
        recorded = _objects(conn)
        second = charter.migrate(conn)
        assert not second.changed
        assert second.version == first.version
        assert _objects(conn) == recorded  # not even re-recorded


def test_every_shipped_file_is_recorded_with_its_checksum(conn):
    recorded = dict(conn.execute("SELECT name, checksum FROM charter.schema_migrations"))
    assert recorded == {f.name: f.checksum for f in migrations.load_files()}
    assert conn.execute("SELECT charter.schema_version()").fetchone()[0] == max(
        f.version for f in migrations.load_files() if f.version
    )


def test_a_changed_applied_migration_is_refused_and_nothing_changes(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        charter.migrate(conn, source=sql_copy)
        before = _objects(conn)
        first = sorted((sql_copy / "migrations").iterdir())[0]
        first.write_text(first.read_text() + "\nCREATE TABLE charter.sneaky (id int);\n")
        (sql_copy / "migrations" / "9999_later.sql").write_text("CREATE TABLE charter.later();")
        with pytest.raises(MigrationChecksumError) as caught:
            charter.migrate(conn, source=sql_copy)
        assert caught.value.code == "MIGRATION_CHECKSUM_MISMATCH"
        assert first.name in caught.value.message
        assert "new migration file" in caught.value.message
        assert _objects(conn) == before
        assert conn.execute("SELECT to_regclass('charter.later')").fetchone()[0] is None


def test_line_ending_changes_alone_are_not_a_change(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        charter.migrate(conn, source=sql_copy)
        first = sorted((sql_copy / "migrations").iterdir())[0]
        first.write_bytes(first.read_bytes().replace(b"\n", b"\r\n"))
        assert not charter.migrate(conn, source=sql_copy).changed


def test_a_new_migration_and_a_changed_function_are_applied_on_upgrade(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        charter.migrate(conn, source=sql_copy)
        (sql_copy / "migrations" / "9000_add_widgets.sql").write_text(
            "CREATE TABLE charter.widgets (id bigint PRIMARY KEY);"
        )
        function = sql_copy / "functions" / "0100_schema_version.sql"
        function.write_text(
            function.read_text().replace("-- The version", "-- Changed comment. The version")
        )
        report = charter.migrate(conn, source=sql_copy)
        assert report.applied == ["migrations/9000_add_widgets.sql"]
        # after a new migration every function and trigger file is applied again
        assert report.reapplied == [
            f.name for f in migrations.load_files(sql_copy) if f.kind == "repeatable"
        ]
        (sql_copy / "functions" / "0100_schema_version.sql").write_text(
            function.read_text().replace("-- Changed comment.", "-- Changed again.")
        )
        assert charter.migrate(conn, source=sql_copy).reapplied == [
            "functions/0100_schema_version.sql",
            "grants/0100_roles.sql",  # grants follow any change of the functions
        ]  # otherwise only what changed
        assert report.version == "9000"
        assert conn.execute("SELECT to_regclass('charter.widgets')").fetchone()[0] is not None


def test_a_failing_migration_names_the_file_and_leaves_the_old_version(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        charter.migrate(conn, source=sql_copy)
        before = _objects(conn)
        (sql_copy / "migrations" / "9000_good.sql").write_text("CREATE TABLE charter.good();")
        (sql_copy / "migrations" / "9001_broken.sql").write_text("CREATE TABLE charter.bad(;")
        with pytest.raises(MigrationError) as caught:
            charter.migrate(conn, source=sql_copy)
        assert "migrations/9001_broken.sql failed" in caught.value.message
        assert "syntax error" in caught.value.message
        assert _objects(conn) == before
        assert conn.execute("SELECT to_regclass('charter.good')").fetchone()[0] is None


def test_a_database_migrated_by_a_newer_charter_is_refused(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        (sql_copy / "migrations" / "9000_future.sql").write_text("SELECT 1;")
        charter.migrate(conn, source=sql_copy)
        with pytest.raises(MigrationUnknownError) as caught:
            charter.migrate(conn)
        assert "migrations/9000_future.sql" in caught.value.message
        assert "Upgrade charter" in caught.value.message


def test_a_migration_numbered_below_the_applied_ones_is_refused(empty_db_url, sql_copy):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        (sql_copy / "migrations" / "9000_b.sql").write_text("SELECT 1;")
        charter.migrate(conn, source=sql_copy)
        (sql_copy / "migrations" / "8000_a.sql").write_text("SELECT 1;")
        with pytest.raises(MigrationError, match="must be applied in order"):
            charter.migrate(conn, source=sql_copy)


@pytest.mark.parametrize("name", ["1_short.sql", "0002-Dash.sql", "abcd_x.sql"])
def test_badly_named_migration_files_are_refused(sql_copy, name):
    (sql_copy / "migrations" / name).write_text("SELECT 1;")
    with pytest.raises(MigrationError, match=r"NNNN_description\.sql"):
        migrations.load_files(sql_copy)


def test_two_migrations_with_one_version_are_refused(sql_copy):
    (sql_copy / "migrations" / "0001_other.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="share version 0001"):
        migrations.load_files(sql_copy)


def test_pending_lists_what_migrate_would_apply(empty_db_url):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        assert [f.name for f in migrations.pending(conn)] == [
            f.name for f in migrations.load_files()
        ]
        charter.migrate(conn)
        assert migrations.pending(conn) == []


def test_every_function_in_schema_charter_comes_from_a_shipped_file(conn):
    names = {
        row[0]
        for row in conn.execute(
            "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'charter'::regnamespace"
        )
    }
    shipped = "\n".join(f.sql for f in migrations.load_files() if f.kind == "repeatable")
    for name in names:
        assert f"charter.{name}(" in shipped, f"charter.{name} has no function file"


def test_each_function_file_holds_one_function_named_like_the_file():
    for file in migrations.load_files():
        if not file.name.startswith("functions/"):
            continue
        created = re.findall(r"^CREATE OR REPLACE FUNCTION charter\.(\w+)\(", file.sql, re.M)
        assert len(created) == 1, f"{file.name} creates {created}: one function per file"
        assert file.name.endswith(f"_{created[0].lstrip('_')}.sql"), file.name


def test_a_renamed_function_file_keeps_its_function_and_leaves_no_stale_record(
    empty_db_url, sql_copy
):
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        charter.migrate(conn, source=sql_copy)
        old = sql_copy / "functions" / "0100_schema_version.sql"
        old.rename(sql_copy / "functions" / "0101_schema_version.sql")
        report = charter.migrate(conn, source=sql_copy)
        assert report.reapplied == ["functions/0101_schema_version.sql", "grants/0100_roles.sql"]
        recorded = {row[0] for row in _objects(conn)}
        assert recorded == {f.name for f in migrations.load_files(sql_copy)}
        assert conn.execute("SELECT charter.schema_version()").fetchone()[0]
        assert migrations.pending(conn, source=sql_copy) == []


def test_every_named_query_says_in_a_line_what_it_does():
    text = (Path(str(migrations.sql_dir())) / "queries.sql").read_text()
    for name, body in re.findall(r"^-- name: (\w+)\n(.*?)(?=^-- name: |\Z)", text, re.M | re.S):
        assert body.startswith("-- "), f"query {name} has no description line below its name"
