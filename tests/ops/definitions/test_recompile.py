"""WF-07's way out for contracted workflows: an effective workflow compiled by an older
compiler is refused by the engine until `charter recompile` compiles it again in place."""

from __future__ import annotations

import json
import time

import psycopg

from charter.compiler.compiled import compiled_hash
from tests.integration.helpers import charter_env, run_charter
from tests.workers import running_worker


def test_a_stale_effective_workflow_is_refused_until_recompiled(acme, db_url, sql):
    version = acme.definitions.current("royalty_period")
    stale = dict(version.compiled, compilerVersion="1.0.0")
    stale["hash"] = compiled_hash(stale)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SELECT set_config('charter.recompiling', %s, false)", (version.version_id,))
        conn.execute(
            "UPDATE charter.workflow_versions SET compiled = %s, compiled_hash = %s, "
            "compiler_version = '1.0.0' WHERE id = %s",
            (json.dumps(stale), stale["hash"], version.version_id),
        )
    doc = acme.documents.create("royalty_period", {"franchisee": "F", "sales": 1}, actor="sales")
    with running_worker(db_url, poll_interval=0.05):
        # The engine refuses the stale version: the event fails with the reason, no instance.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            [(status, error)] = sql(
                "SELECT status, error FROM charter.document_events WHERE document_id = %s", doc.id
            )
            if status != "processing" and "WORKFLOW_COMPILER_STALE" in (error or ""):
                break
            time.sleep(0.05)
        assert "WORKFLOW_COMPILER_STALE" in error and "charter recompile" in error
        assert acme.documents.get(doc.id).workflow.run_id is None

        done = run_charter("recompile", env=charter_env(CHARTER_DATABASE_URL=db_url))
        assert done.returncode == 0, done.stderr
        assert "recompiled (was [WORKFLOW_COMPILER_STALE])" in done.stdout
        assert version.version_id in done.stdout
        # The same worker judges the version again and the document's workflow starts.
        sql("SELECT charter.retry_dead_letters('acme', %s)", doc.id)
        started = acme.documents.wait(doc.id, timeout=30, until="idle")  # at its timer
        assert started.workflow.status == "running"
    [(compiler,)] = sql(
        "SELECT compiler_version FROM charter.workflow_versions WHERE id = %s", version.version_id
    )
    assert compiler == "1.1.0"
    again = run_charter("recompile", env=charter_env(CHARTER_DATABASE_URL=db_url))
    assert "nothing to do" in again.stdout
