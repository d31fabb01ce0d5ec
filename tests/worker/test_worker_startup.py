"""`charter worker`, `charter deploy` and `charter compile` on real flow modules."""

import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

from charter.db.mode import KNOWN_LOCAL_SUPABASE_ANON_KEY
from tests.integration.helpers import charter_env, run_charter

V1 = """
from charter import Flow

flow = Flow("orders", max_attempts=3)

@flow.step
def load(run: dict) -> list:
    return run["items"]

@flow.map(over=load)
def price(item: dict) -> int:
    return item["cents"]

@flow.step(depends_on=[price])
def total(price: list[int]) -> int:
    return sum(price)
"""

V2 = (
    V1
    + """
@flow.step(depends_on=[total, load])
def invoice(total: int, load: list) -> dict:
    return {"total": total, "lines": len(load)}
"""
)

# price becomes a single step over the whole list, and invoice is new
V2_PRICE_NOT_MAPPED = V2.replace("@flow.map(over=load)", "@flow.step(depends_on=[load])").replace(
    'def price(item: dict) -> int:\n    return item["cents"]',
    "def price(load: list) -> list:\n    return [i['cents'] for i in load]",
)


def _project(tmp_path: Path, source: str) -> Path:
    (tmp_path / "shop").mkdir(exist_ok=True)
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "flows.py").write_text(textwrap.dedent(source))
    return tmp_path


def _charter(project, db_url, *args, **env):
    return subprocess.run(
        [sys.executable, "-m", "charter", *args],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        env=charter_env(CHARTER_DATABASE_URL=db_url, **env),
    )


PRODUCTION = {"CHARTER_MODE": "production"}
DEVELOPMENT = {"SUPABASE_ANON_KEY": KNOWN_LOCAL_SUPABASE_ANON_KEY}


def _versions(db_url):
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "SELECT version, (SELECT count(*) FROM charter.flow_steps s WHERE s.version_id = v.id)"
            " FROM charter.workflow_versions v WHERE workflow_slug = 'orders' ORDER BY version"
        ).fetchall()


def test_production_worker_compiles_a_missing_flow_then_verifies_it(tmp_path, empty_db_url):
    project = _project(tmp_path, V1)
    first = _charter(project, empty_db_url, "worker", "shop.flows", "--check-only", **PRODUCTION)
    assert first.returncode == 0, first.stderr
    assert "flow 'orders' compiled (production mode)" in first.stderr
    again = _charter(
        project, empty_db_url, "worker", "shop.flows:flow", "--check-only", **PRODUCTION
    )
    assert again.returncode == 0, again.stderr
    assert "flow 'orders' verified (production mode)" in again.stderr
    assert _versions(empty_db_url) == [(1, 3)]


def test_production_worker_refuses_a_changed_flow_listing_every_difference(tmp_path, db_url):
    project = _project(tmp_path, V1)
    assert (
        _charter(project, db_url, "worker", "shop.flows", "--check-only", **PRODUCTION).returncode
        == 0
    )
    _project(tmp_path, V2_PRICE_NOT_MAPPED)
    failed = _charter(project, db_url, "worker", "shop.flows", "--check-only", **PRODUCTION)
    assert failed.returncode == 1
    assert "FLOW_SHAPE_MISMATCH" in failed.stderr
    assert "Step 'invoice' is in the code but not in the database" in failed.stderr
    assert "Step 'price' changed type: map in the database, single in the code" in failed.stderr
    assert "charter deploy shop.flows" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert _versions(db_url) == [(1, 3)]  # nothing overwritten


def test_development_worker_publishes_a_changed_flow_and_keeps_the_old_runs(tmp_path, db_url):
    project = _project(tmp_path, V1)
    assert (
        _charter(project, db_url, "worker", "shop.flows", "--check-only", **DEVELOPMENT).returncode
        == 0
    )
    _project(tmp_path, V2)
    result = _charter(project, db_url, "worker", "shop.flows", "--check-only", **DEVELOPMENT)
    assert result.returncode == 0, result.stderr
    assert "flow 'orders' recompiled (development mode)" in result.stderr
    assert "Step 'invoice' is in the code but not in the database" in result.stderr
    assert _versions(db_url) == [(1, 3), (2, 4)]  # a new version; nothing deleted


def test_deploy_and_worker_deploy_publish_new_versions(tmp_path, db_url):
    project = _project(tmp_path, V1)
    assert (
        _charter(project, db_url, "worker", "shop.flows", "--check-only", **PRODUCTION).returncode
        == 0
    )
    _project(tmp_path, V2)
    deployed = _charter(project, db_url, "deploy", "shop.flows", **PRODUCTION)
    assert deployed.returncode == 0, deployed.stderr
    assert "flow 'orders': deployed (version 2" in deployed.stdout
    assert _versions(db_url) == [(1, 3), (2, 4)]
    _project(tmp_path, V1)  # back to the first shape: a third version, via the worker flag
    flagged = _charter(
        project, db_url, "worker", "shop.flows", "--deploy", "--check-only", **PRODUCTION
    )
    assert flagged.returncode == 0, flagged.stderr
    assert "flow 'orders' deployed" in flagged.stderr
    assert _versions(db_url) == [(1, 3), (2, 4), (3, 3)]


def test_compile_prints_sql_that_publishes_the_flow(tmp_path, db_url):
    project = _project(tmp_path, V1)
    printed = _charter(project, db_url, "compile", "shop.flows:flow")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("-- Flow 'orders'")
    with psycopg.connect(db_url, autocommit=True) as conn:
        status = conn.execute(printed.stdout).fetchone()[0]["status"]
        assert status == "compiled"
        assert conn.execute(printed.stdout).fetchone()[0]["status"] == "verified"
    again = _charter(project, db_url, "worker", "shop.flows", "--check-only", **PRODUCTION)
    assert "flow 'orders' verified" in again.stderr


@pytest.mark.parametrize(
    ("source", "spec", "code", "fragment"),
    [
        (V1, "shop.nothing", "FLOW_LOAD_FAILED", "No module named shop.nothing"),
        (V1, "shop.flows:missing", "FLOW_LOAD_FAILED", "has no attribute missing"),
        (V1, "shop.flows:Flow", "FLOW_LOAD_FAILED", "not a Flow"),
        ("x = 1\n", "shop.flows", "FLOW_LOAD_FAILED", "defines no Flow"),
        ("raise RuntimeError('boom')\n", "shop.flows", "FLOW_LOAD_FAILED", "RuntimeError: boom"),
        (
            V1 + "\n@flow.step(depends_on=['nope'])\ndef bad(nope): ...\n",
            "shop.flows",
            "FLOW_DEPENDENCY_UNKNOWN",
            "Step 'bad' of flow 'orders'",
        ),
    ],
)
def test_bad_flow_modules_are_one_clear_error(tmp_path, db_url, source, spec, code, fragment):
    project = _project(tmp_path, source)
    result = _charter(project, db_url, "worker", spec, "--check-only", **PRODUCTION)
    assert result.returncode == 1
    assert code in result.stderr and fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_worker_on_the_embedded_default_runs_in_development_mode(tmp_path):
    project = _project(tmp_path, V1.replace('"orders"', '"orders_embedded_mode"'))
    env = charter_env(CHARTER_DATA_DIR=str(tmp_path / "pg"))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "charter", "worker", "shop.flows", "--check-only"],
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "(development mode)" in result.stderr
    finally:
        run_charter("db", "stop", env=env)


def test_a_bad_org_for_the_worker_is_one_clear_error(tmp_path, db_url):
    project = _project(tmp_path, V1)
    for args, env in (
        (("--org", "acme", "--org", ""), {}),
        ((), {"CHARTER_WORKER_ORGS": "acme," + "x" * 201}),
    ):
        result = _charter(project, db_url, "worker", "shop.flows", *args, "--check-only", **env)
        assert result.returncode == 1, result.stderr
        assert "ARGUMENT_INVALID" in result.stderr and "org id must be 1 to 200" in result.stderr
        assert "Traceback" not in result.stderr
    ok = _charter(project, db_url, "worker", "shop.flows", "--org", "acme", "--check-only")
    assert ok.returncode == 0, ok.stderr
