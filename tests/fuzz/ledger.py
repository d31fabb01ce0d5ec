"""What the fuzz suite checks for every bad input besides its answer: nothing written (a
hash of every table's contents, computed in SQL, is the same before and after), and how
many bad inputs each entry point got (the suite asserts it fed at least ``BUDGET``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import TypeVar

import psycopg
from psycopg import sql

from charter.errors import CharterError
from tests.fuzz.strategies import charter_error_or_result

T = TypeVar("T")

# The probe fed 650 bad inputs; the suite feeds at least as many on every run.
BUDGET = 650
ENTRY_POINTS = ("client", "cli", "http")

# Columns that change without anything being written for the caller: a key marked used (at
# most once a minute, on any authenticated request) and a worker's heartbeat.
_CLOCKS = ["last_used_at", "last_heartbeat_at"]

fed: Counter[str] = Counter()  # bad inputs per entry point, over the whole session
refused: Counter[str] = Counter()  # of them, those answered with a coded refusal


def record(entry_point: str, was_refused: bool) -> None:
    """One bad input fed to ``entry_point`` (client, cli or http) and how it was answered."""
    assert entry_point in ENTRY_POINTS, entry_point
    fed[entry_point] += 1
    refused[entry_point] += was_refused


@cache
def _hash_query(db_url: str) -> sql.Composed:
    """One statement hashing each table of schema charter (partitions through their parent):
    per table, md5 over the sorted md5s of its rows as JSON, so row order does not matter."""
    with psycopg.connect(db_url) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                """SELECT c.relname FROM pg_catalog.pg_class AS c
                    WHERE c.relnamespace = 'charter'::regnamespace AND c.relkind IN ('r', 'p')
                      AND NOT c.relispartition ORDER BY 1"""
            )
        ]
    per_table = [
        sql.SQL(
            "SELECT {name}, md5(coalesce(string_agg(h, ',' ORDER BY h), '')) FROM"
            " (SELECT md5((to_jsonb(t) - {clocks}::text[])::text) AS h"
            " FROM charter.{table} AS t) AS x"
        ).format(name=sql.Literal(table), clocks=sql.Literal(_CLOCKS), table=sql.Identifier(table))
        for table in tables
    ]
    return sql.SQL(" UNION ALL ").join(per_table)


def table_hashes(db_url: str) -> dict[str, str]:
    """Every charter table's contents as a hash, by table name."""
    with psycopg.connect(db_url) as conn:
        return dict(conn.execute(_hash_query(db_url)).fetchall())


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The tables whose contents differ."""
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


def answered(entry_point: str, db_url: str, call: Callable[[], T]) -> T | CharterError:
    """``call``'s result, or the CharterError it raised (any other exception fails the test);
    a refusal must leave every table as it was. Recorded as one bad input of
    ``entry_point``."""
    before = table_hashes(db_url)
    outcome = charter_error_or_result(call)
    was_refused = isinstance(outcome, CharterError)
    record(entry_point, was_refused)
    if was_refused:
        assert changed(before, table_hashes(db_url)) == [], f"refused, yet written: {outcome}"
    return outcome
