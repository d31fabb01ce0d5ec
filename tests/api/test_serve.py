"""`charter serve` is least-privilege out of the box: on the embedded server it runs as
charter_serve (a member of charter_app), and it refuses an owner's or a superuser's URL
unless told --as-owner."""

from __future__ import annotations

import copy
import re
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from charter import Client
from charter.db import embedded
from charter.demos.use_cases import USE_CASES
from tests.integration.helpers import charter_env, run_charter, start_charter
from tests.ops.documents.conftest import invoice_contract

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_serving(proc: subprocess.Popen[str], port: int) -> None:
    """Polls until the server answers (or its process ends, which fails the test)."""
    for _ in range(600):
        if proc.poll() is not None:
            _, stderr = proc.communicate()
            pytest.fail(f"charter serve exited with {proc.returncode}: {stderr}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=5)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail("charter serve never answered")


def _stopped(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.terminate()
    return proc.communicate(timeout=60)


def _key(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    found = re.search(r"chk_\w+", result.stdout)
    assert found is not None, result.stdout
    return found.group(0)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pg"
    yield path
    embedded.stop(path)


def test_the_quickstart_serves_as_charter_serve_on_the_embedded_server(data_dir):
    env = charter_env(CHARTER_DATA_DIR=str(data_dir))
    # The README's quickstart, as written: the key is made by the owner (the CLI).
    ops_key = _key(run_charter("keys", "create", "--org", "default", "--actor", "service:ops",
                               env=env))  # fmt: skip
    platform_key = _key(run_charter("keys", "create", "--platform", env=env))
    server = embedded.status(data_dir)
    assert server is not None
    with Client(server.url(), org_id="default") as owner:  # the owner publishes a contract
        owner.definitions.publish(invoice_contract())
        owner.directory.put_user("u-1", roles=["clerk"])
        doc = owner.documents.create("invoice", {"grand_total": 5}, actor="u-1")

    port = _free_port()
    proc = start_charter("serve", "--port", str(port), env=env)
    try:
        _wait_until_serving(proc, port)
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        ops = {"Authorization": f"Bearer {ops_key}"}
        assert api.get("/api/health", headers=ops).status_code == 200  # reads and health
        # A service key never changes documents past their policies.
        made = api.post("/api/documents", headers=ops,
                        json={"entity_type": "invoice", "data": {"grand_total": 1}})  # fmt: skip
        assert made.status_code == 403, made.text
        assert made.json()["error"]["code"] == "PERMISSION_DENIED"
        moved = api.post(f"/api/documents/{doc.id}/transitions", headers=ops,
                         json={"gate": "submit"})  # fmt: skip
        assert moved.status_code == 403, moved.text
        # Nor does any key publish a new contract: that needs the owner (charter publish).
        contract, _ = copy.deepcopy(USE_CASES["A"])
        for key in (ops, {"Authorization": f"Bearer {platform_key}"}):
            refused = api.post("/api/definitions", headers=key, json={"contract": contract})
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["code"] == "PERMISSION_DENIED"
        with psycopg.connect(server.url()) as conn:
            users = {
                row[0]
                for row in conn.execute(
                    "SELECT usename FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                    "AND datname = 'charter' AND backend_type = 'client backend'"
                )
            }
            member = conn.execute(
                "SELECT rolsuper, pg_has_role('charter_serve', 'charter_app', 'MEMBER'), "
                "pg_has_role('charter_serve', (SELECT nspowner FROM pg_namespace "
                "WHERE nspname = 'charter'), 'MEMBER') FROM pg_roles "
                "WHERE rolname = 'charter_serve'"
            ).fetchone()
        assert users == {"charter_serve"}
        assert member == (False, True, False)
        assert Client(server.url(), org_id="default").documents.get(doc.id).version == 1
    finally:
        stdout, _ = _stopped(proc)
    assert "role charter_serve" in stdout
    secret = data_dir / "serve.password"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_serve_refuses_an_owner_url_unless_told_as_owner(db_url, login):
    env = charter_env()
    refused = run_charter("--database-url", db_url, "serve", "--port", str(_free_port()),
                          env=env)  # fmt: skip
    assert refused.returncode == 1
    assert "--as-owner" in refused.stderr and "charter_app" in refused.stderr
    assert "Traceback" not in refused.stderr

    port = _free_port()
    proc = start_charter("--database-url", db_url, "serve", "--port", str(port), "--as-owner",
                         env=env)  # fmt: skip
    try:
        _wait_until_serving(proc, port)
    finally:
        _, stderr = _stopped(proc)
    assert "warning" in stderr and "--as-owner" in stderr
    assert "publishes contracts for every org" in stderr and "row-level security" in stderr

    # A member of charter_app is served without a word.
    port = _free_port()
    proc = start_charter("--database-url", login("charter_app"), "serve", "--port", str(port),
                         env=env)  # fmt: skip
    try:
        _wait_until_serving(proc, port)
    finally:
        _, stderr = _stopped(proc)
    assert "warning" not in stderr


def test_create_app_on_the_embedded_default_runs_as_charter_serve(data_dir, monkeypatch):
    from starlette.testclient import TestClient

    from charter.api import create_app

    monkeypatch.setenv("CHARTER_DATA_DIR", str(data_dir))
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    assert run_charter("migrate", env=charter_env(CHARTER_DATA_DIR=str(data_dir))).returncode == 0
    with TestClient(create_app()) as site:
        unknown = {"Authorization": "Bearer chk_0_" + "0" * 64}  # looked up, not found
        assert site.get("/api/health", headers=unknown).status_code == 401
        server = embedded.status(data_dir)
        assert server is not None
        with psycopg.connect(server.url()) as conn:
            users = {
                row[0]
                for row in conn.execute(
                    "SELECT usename FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                    "AND datname = 'charter' AND backend_type = 'client backend'"
                )
            }
    assert users == {"charter_serve"}
