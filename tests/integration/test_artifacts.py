"""WF-07 at run time: no artifact, no run; a stale or damaged artifact is not served, and
`charter recompile` is the owner's way out. Flow-level options are tuned in place."""

from __future__ import annotations

import logging

import psycopg
import pytest

from charter import Client, Flow
from charter.cli import main
from charter.errors import WorkflowArtifactMissingError
from charter.ops.flows import deploy_flow
from tests.workers import running_worker


def _flow() -> Flow:
    flow = Flow("artifacts", max_attempts=1)
    flow.step(slug="only")(lambda run: run * 3)
    return flow


def _tamper(db_url: str, sql: str) -> None:
    """Changes a published version behind the WF-04 trigger's back (as an attacker would)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(sql)


def test_a_version_without_an_artifact_cannot_be_started(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "SELECT charter.deploy_flow('bare', %s::jsonb)",
            ('{"options": {}, "steps": [{"slug": "a", "stepType": "single", '
             '"dependencies": [], "options": {}}]}',),
        )  # fmt: skip
    with Client(db_url) as client, pytest.raises(WorkflowArtifactMissingError, match="recompile"):
        client.start("bare", 1)
    assert main(["--database-url", db_url, "recompile"]) == 0
    with Client(db_url) as client:
        assert client.start("bare", 1)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("jsonb_set(compiled, '{compilerVersion}', '\"0.0.1\"')", "WORKFLOW_COMPILER_STALE"),
        ("jsonb_set(compiled, '{slug}', '\"other\"')", "WORKFLOW_HASH_MISMATCH"),
    ],
)
def test_workers_do_not_serve_a_stale_or_damaged_version_until_it_is_recompiled(
    db_url, caplog, capsys, damage, code
):
    flow = _flow()
    with psycopg.connect(db_url, autocommit=True) as conn:
        version_id = deploy_flow(conn, flow).version_id
    _tamper(
        db_url,
        f"UPDATE charter.workflow_versions SET compiled = {damage}, "
        f"compiler_version = ({damage})->>'compilerVersion' WHERE id = '{version_id}'",
    )
    with caplog.at_level(logging.ERROR, "charter.worker"):
        with running_worker(db_url, flow, install_flows=False) as worker, Client(db_url) as client:
            run_id = client.start("artifacts", 2)
            assert worker.versions == []
            assert client.get_run(run_id).serving_workers == 0
        assert f"[{code}]" in caplog.text and "will not run on this worker" in caplog.text
    assert main(["--database-url", db_url, "recompile"]) == 0
    assert f"recompiled (was [{code}])" in capsys.readouterr().out
    with running_worker(db_url, flow, install_flows=False), Client(db_url) as client:
        assert client.wait(run_id, timeout=30).output == {"only": 6}


def test_flow_level_options_are_tuned_in_place_and_the_definition_is_not(db_url):
    flow = _flow()
    with psycopg.connect(db_url, autocommit=True) as conn:
        version_id = deploy_flow(conn, flow).version_id
        conn.execute(
            "UPDATE charter.workflow_versions SET opt_max_attempts = 5, opt_timeout = 9 "
            "WHERE id = %s",
            (version_id,),
        )
        with pytest.raises(psycopg.Error, match="immutable"):
            conn.execute(
                "UPDATE charter.workflow_versions SET compiled_hash = 'x' WHERE id = %s",
                (version_id,),
            )
        run_id = conn.execute("SELECT charter.start_run('artifacts', '1')").fetchone()[0]["runId"]
        max_attempts = conn.execute(
            "SELECT max_attempts FROM charter.tasks WHERE run_id = %s", (run_id,)
        ).fetchone()[0]
    assert max_attempts == 5  # what runs is what the database says now
