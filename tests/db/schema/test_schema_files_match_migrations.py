"""Applying every migration in order must give exactly the schema the schema/ and types/ files
describe."""

from pathlib import Path

import psycopg

import charter
from charter.db import migrate as migrations
from charter.db.queries import query

CATALOG = (Path(__file__).parents[2] / "catalog.sql").read_text()


def catalog(url: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute(CATALOG).fetchall()


def build_from_schema_files(url: str) -> None:
    root = Path(str(migrations.sql_dir()))
    with psycopg.connect(url) as conn:
        # schema/ then types/ (composite types, which only functions use), then what
        # migrate() applies after the migrations
        for folder in ("schema", "types"):
            for path in sorted((root / folder).glob("*.sql")):
                conn.execute(path.read_text())
        for file in migrations.load_files():
            if file.kind == "repeatable":
                conn.execute(file.sql)
        conn.execute(query("ensure_partitions"))  # what migrate() does after the files


def test_migrations_produce_exactly_the_schema_files(databases):
    from_schema = databases.url(databases.create())
    from_migrations = databases.url(databases.create())
    build_from_schema_files(from_schema)
    with psycopg.connect(from_migrations) as conn:
        charter.migrate(conn)
    expected, actual = catalog(from_schema), catalog(from_migrations)
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    assert not missing, f"only in the schema files, not made by migrations: {missing}"
    assert not extra, f"made by migrations, not in the schema files: {extra}"
    assert len(expected) > 5  # the comparison really saw the schema
