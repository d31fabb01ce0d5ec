"""Advisory lock keys have a namespace per kind: no caller-chosen id takes another's lock."""

import threading

import psycopg
import pytest

from charter.ops.flows import ensure_flow_compiled
from tests.engine import install, start
from tests.flows_for_tests import diamond, two_leaves

pytestmark = pytest.mark.citus  # runs on a Citus cluster too (tests/db/citus/gaps.py)


def test_lock_keys_differ_by_kind_and_unknown_kinds_are_refused(conn):
    keys = conn.execute(
        "SELECT charter._lock_key('run', 'flow:orders'), charter._lock_key('flow', 'orders'), "
        "charter._lock_key('run', 'charter:flow:orders'), charter._lock_key('run', 'x'), "
        "charter._lock_key('version', 'x'), hashtextextended('migration:schema', 0), "
        "charter._lock_key('migration', 'schema')"
    ).fetchone()
    assert len(set(keys[:5])) == 5
    assert keys[5] == keys[6]  # queries.sql writes the migration key out: the same key
    with pytest.raises(psycopg.Error, match="unknown lock kind"):
        conn.execute("SELECT charter._lock_key('table', 'x')")


@pytest.mark.parametrize("run_id", ["flow:two_leaves", "charter:flow:two_leaves", "two_leaves"])
def test_a_run_whose_id_looks_like_a_flow_lock_does_not_block_compiling_that_flow(db_url, run_id):
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, diamond())
        start(conn, "diamond", {"n": 1}, run_id=run_id)
    holder = psycopg.connect(db_url)
    try:
        # Holds the run's lock (cancel_run takes it) in an open transaction.
        holder.execute("SELECT charter.cancel_run(%s)", (run_id,))
        outcome: list[object] = []

        def compile_flow() -> None:
            with psycopg.connect(db_url, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '2s'")
                outcome.append(ensure_flow_compiled(conn, two_leaves(), "production").status)

        thread = threading.Thread(target=compile_flow)
        thread.start()
        thread.join(10)
        assert outcome == ["compiled"]
    finally:
        holder.rollback()
        holder.close()
