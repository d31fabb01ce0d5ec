"""Least-privilege roles (seed 003): a worker and an app that can do their jobs and nothing
else — no table access, nothing destructive or structural, nothing for PUBLIC."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import psycopg
import pytest

from charter import Client, Flow
from charter.errors import FlowNotFoundError, PermissionDeniedError, SchemaNotCurrentError
from tests.engine import install
from tests.integration.helpers import charter_env
from tests.workers import running_worker


def _flow() -> Flow:
    flow = Flow("roles_flow", max_attempts=1)
    first = flow.step(slug="first")(lambda run: run + 1)
    flow.step(slug="second", depends_on=[first])(lambda first: first * 2)
    return flow


FORBIDDEN = [
    "SELECT * FROM charter.runs",
    "SELECT * FROM charter.tasks",
    "SELECT * FROM charter.step_executions",
    "SELECT * FROM charter.schema_migrations",
    "INSERT INTO charter.runs (id, workflow_slug, version_id, input) VALUES ('x', 'y', 'z', '{}')",
    "UPDATE charter.tasks SET status = 'completed'",
    "DELETE FROM charter.step_receipts",
    "SELECT charter.delete_flow_and_data('roles_flow')",
    "SELECT charter.deploy_flow('roles_flow', '{}'::jsonb)",
    "SELECT charter.ensure_flow_compiled('roles_flow', '{}'::jsonb)",
    "SELECT charter._fail_run('x', 'default', 'y', '{}')",
    "SELECT charter.rebuild_run_projection('x')",
    "CREATE TABLE charter.mine (id int)",
    "SELECT charter.archive_evidence('2001-01-01')",
    "CREATE TABLE charter_archive.mine (id int)",
]


# What charter_app may read directly, under row-level security (its org's rows only).
APP_READABLE = {
    "documents",
    "document_versions",
    "document_audit",
    "directory_users",
    "directory_orgs",
    "workflow_instances",
}


@pytest.mark.parametrize("role", ["charter_worker", "charter_app"])
def test_the_roles_cannot_touch_tables_or_do_anything_structural(db_url, login, role):
    url = login(role)
    with psycopg.connect(db_url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'charter' AND c.relkind IN ('r', 'p')"
                " AND NOT c.relispartition ORDER BY 1"
            )
        ]
    assert len(tables) > 20
    readable = APP_READABLE if role == "charter_app" else set()
    with psycopg.connect(url, autocommit=True) as conn:
        for table in tables:
            for statement in (
                f"SELECT 1 FROM charter.{table} LIMIT 1",
                f"DELETE FROM charter.{table}",
                f"TRUNCATE charter.{table}",
            ):
                if statement.startswith("SELECT") and table in readable:
                    conn.execute(statement)
                    continue
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(statement)
        for statement in FORBIDDEN:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


def test_public_may_execute_nothing_of_charter(db_url, login):
    url = login(None)
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in ("SELECT charter.get_run('x')", "SELECT charter.schema_version()"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
    with psycopg.connect(db_url) as conn:
        exposed = conn.execute(
            """SELECT p.proname FROM pg_proc AS p
                 JOIN pg_namespace AS n ON n.oid = p.pronamespace
                WHERE n.nspname = 'charter'
                  AND has_function_privilege('public', p.oid, 'EXECUTE')"""
        ).fetchall()
    assert exposed == []


def test_every_function_a_role_may_call_is_security_definer_with_an_empty_search_path(conn):
    rows = conn.execute(
        """SELECT p.proname, p.prosecdef, p.proconfig FROM pg_proc AS p
             JOIN pg_namespace AS n ON n.oid = p.pronamespace
            WHERE n.nspname = 'charter'
              AND (has_function_privilege('charter_worker', p.oid, 'EXECUTE')
                   OR has_function_privilege('charter_app', p.oid, 'EXECUTE'))"""
    ).fetchall()
    assert len(rows) >= 20
    for name, definer, config in rows:
        # Seed 003's runner runs as its caller, so the caller's own grants decide what it
        # may run; everything else runs as the owner, with an empty search path.
        assert definer or name == "run_function", f"charter.{name} runs with its caller's rights"
        assert 'search_path=""' in config, f"charter.{name} has a search path"


def test_worker_and_app_roles_run_a_flow_end_to_end(db_url, login):
    worker_url, app_url = login("charter_worker"), login("charter_app")
    flow = _flow()
    with psycopg.connect(db_url, autocommit=True) as conn:
        install(conn, flow)  # publishing is the owner's job
    with (
        running_worker(worker_url, flow, install_flows=False),
        Client(app_url) as client,  # migrate=True: as app role it checks, does not migrate
    ):
        run_id = client.start(flow, 1)
        run = client.wait(run_id, timeout=30)
        assert run.output == {"second": 4}
        [listed] = client.list_runs(flow=flow)
        assert listed.id == run_id and client.queue() == []
        assert client.workers()[0].alive
        ids = client.start_many("roles_flow", [1, 2])
        assert client.cancel(ids[0]) == "cancelled"
        version = client.registry.create_workflow_version("wf_roles", {"p": 1}, "m", "init")
        assert client.registry.lineage(version.version_id).workflow_id == "wf_roles"
        with pytest.raises(PermissionDeniedError, match="charter_app"):
            client.store.perform(_delete("roles_flow"))


def _delete(slug: str):
    from charter.ops import flows as flows_ops

    return flows_ops.delete_flow(slug)


def test_an_app_role_cannot_publish_a_missing_flow_and_is_told_who_can(db_url, login):
    with Client(login("charter_app")) as client, pytest.raises(FlowNotFoundError) as caught:
        client.start(_flow(), 1)
    assert "charter deploy MODULE" in caught.value.message


WORKER_MODULE = """
from charter import Flow

flow = Flow("roles_cli")
flow.step(slug="only")(lambda run: run)
"""


def test_a_worker_role_starts_without_ddl_and_names_the_owners_command(tmp_path, db_url, login):
    (tmp_path / "roleflows.py").write_text(textwrap.dedent(WORKER_MODULE))
    worker_url = login("charter_worker")

    def charter(url: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "charter", *args],
            cwd=tmp_path,
            env=charter_env(CHARTER_DATABASE_URL=url, CHARTER_MODE="production"),
            capture_output=True,
            text=True,
            timeout=60,
        )

    unpublished = charter(worker_url, "worker", "roleflows", "--check-only")
    assert unpublished.returncode == 1 and "FLOW_NOT_FOUND" in unpublished.stderr
    assert "charter deploy roleflows" in unpublished.stderr
    deploy = charter(worker_url, "worker", "roleflows", "--check-only", "--deploy")
    assert deploy.returncode == 1 and "PERMISSION_DENIED" in deploy.stderr
    assert charter(db_url, "deploy", "roleflows").returncode == 0  # the owner publishes
    ready = charter(worker_url, "worker", "roleflows", "--check-only")
    assert ready.returncode == 0, ready.stderr
    assert "verified (published by the owner)" in ready.stderr
    # An outdated schema: the worker role stops and names `charter migrate`.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE charter.schema_migrations SET checksum = repeat('0', 64) "
            "WHERE name = 'functions/0450_get_run.sql'"
        )
    stale = charter(worker_url, "worker", "roleflows", "--check-only")
    assert stale.returncode == 1 and "SCHEMA_NOT_CURRENT" in stale.stderr
    assert "charter migrate" in stale.stderr and "Traceback" not in stale.stderr
    with pytest.raises(SchemaNotCurrentError):
        Client(login("charter_app")).get_run("x")
