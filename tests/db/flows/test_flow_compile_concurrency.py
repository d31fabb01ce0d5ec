"""N processes that ensure one new flow at the same moment: one compiles, the rest verify."""

import subprocess
import sys
import time

import psycopg
import pytest

GATE = 424242
WORKER = """
import sys, json, psycopg
from charter.ops.flows import ensure_flow_compiled
from tests.flows_for_tests import analyze_site
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute("SELECT pg_advisory_lock_shared(%s)", (int(sys.argv[2]),))  # the start gate
    result = ensure_flow_compiled(conn, analyze_site(), "production")
print(result.status)
"""


def test_concurrent_ensure_gives_one_compiled_and_the_rest_verified(db_url):
    processes = 6
    with psycopg.connect(db_url, autocommit=True) as gate:
        gate.execute("SELECT pg_advisory_lock(%s)", (GATE,))
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, db_url, str(GATE)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(processes)
        ]
        # wait until every process is connected and queued behind the gate
        deadline = time.monotonic() + 60
        while (
            gate.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                "AND objid = %s AND NOT granted",
                (GATE,),
            ).fetchone()[0]
            < processes
        ):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                gate.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
                pytest.fail(
                    f"the processes never all reached the gate: "
                    f"{[p.communicate(timeout=60) for p in procs]}"
                )
            time.sleep(0.01)
        gate.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
        outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * processes, outputs
    statuses = sorted(out.strip() for out, _ in outputs)
    assert statuses == ["compiled"] + ["verified"] * (processes - 1)
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM charter.workflow_versions").fetchone() == (1,)
