"""On a Citus cluster charter's SQL-language functions are re-created in PL/pgSQL (Citus
cannot plan parameters of SQL functions). The port must mean the same: here it runs on one
server and the engine's own tests run against the ported functions."""

from __future__ import annotations

import psycopg
import pytest

from charter.db.citus import distribute, plpgsql_body, port_sql_functions, split_statements
from charter.errors import CitusError
from tests.db.runs import test_chain_runs


def test_statements_split_at_top_level_semicolons_only():
    body = """
    -- a comment; with a semicolon
    INSERT INTO t VALUES ('a;b', $x$;$x$, "c;d");
    /* block; comment */ SELECT f(1; 2) ;
    SELECT 'it''s; fine'
    """
    assert split_statements(body) == [
        "INSERT INTO t VALUES ('a;b', $x$;$x$, \"c;d\")",
        "SELECT f(1; 2)",
        "SELECT 'it''s; fine'",
    ]


def test_the_last_statement_is_returned_as_the_sql_function_returned_it():
    assert plpgsql_body(["SELECT 1"], returns_set=True, returns_void=False) == (
        "RETURN QUERY SELECT 1;"
    )
    assert plpgsql_body(["SELECT 1"], returns_set=False, returns_void=False) == (
        "RETURN (SELECT 1);"
    )
    assert (
        plpgsql_body(["DELETE FROM t", "SELECT g()"], returns_set=False, returns_void=True)
        == "DELETE FROM t;\nPERFORM g();"
    )
    assert (
        plpgsql_body(["UPDATE t SET x = 1 RETURNING x"], returns_set=False, returns_void=False)
        == "UPDATE t SET x = 1 RETURNING x INTO result;\nRETURN result;"
    )


@pytest.fixture
def ported(conn) -> psycopg.Connection:
    with conn.transaction():
        assert len(port_sql_functions(conn)) > 50
    left = conn.execute(
        "SELECT count(*) FROM pg_proc WHERE pronamespace = 'charter'::regnamespace "
        "AND prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql')"
    ).fetchone()[0]
    assert left == 0
    return conn


@pytest.mark.parametrize(
    "check",
    [
        test_chain_runs.test_started_alone_or_in_a_batch_a_one_step_run_writes_no_readiness_rows,
        test_chain_runs.test_a_failed_one_step_run_is_retried_and_a_cancelled_one_stays_cancelled,
    ],
    ids=lambda check: check.__name__,
)
def test_the_engine_runs_the_same_on_its_ported_functions(ported, check):
    check(ported)


def test_distributing_a_server_without_citus_names_what_to_do(conn):
    with pytest.raises(CitusError, match="CREATE EXTENSION citus"):
        distribute(conn)


def test_distributing_before_migrating_names_what_to_run_first(empty_db_url):
    with psycopg.connect(empty_db_url) as conn, pytest.raises(CitusError, match="charter migrate"):
        distribute(conn)
