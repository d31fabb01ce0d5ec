"""Every snippet of the README runs, as written, against a real database.

Python blocks run in order in one namespace (the block that starts `# myapp/flows.py` is
written to that module first), with a worker serving the README's flows: after a block
that defines flows, workers serve those too. Lines of bash
blocks that start with `charter` run as commands, with the README's placeholders filled
in; the few that cannot run here are listed below with the reason.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
import textwrap
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter import Flow
from charter.library.templates import TEMPLATES
from tests.integration.helpers import charter_env
from tests.workers import running_worker

README = Path(__file__).parents[2] / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)

# Commands that cannot run inside a test, and why.
NOT_RUN = {
    "charter worker": "serves until stopped; the test runs a worker in-process instead",
    "charter db start": "acts on the machine's embedded server, not the test database",
    "charter db stop": "would stop the embedded server other tests use",
    "charter flows delete": "runs last, on its own (see below)",
}


def _blocks(language: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(README.read_text("utf-8")) if lang == language]


@pytest.fixture
def readme_project(tmp_path, db_url, monkeypatch):
    python = _blocks("python")
    module = next(code for code in python if code.startswith("# myapp/flows.py"))
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("")
    (tmp_path / "myapp" / "flows.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHARTER_DATABASE_URL", db_url)
    for name in list(sys.modules):
        if name == "myapp" or name.startswith("myapp."):
            del sys.modules[name]
    return tmp_path, [code for code in python if code is not module]


def _django(db_url: str) -> None:
    import django
    from django.conf import settings
    from psycopg import conninfo

    params = conninfo.conninfo_to_dict(db_url)
    if not settings.configured:
        settings.configure(
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": params["dbname"],
                    "USER": params.get("user", ""),
                    "HOST": params.get("host", ""),
                    "PORT": params.get("port", ""),
                }
            }
        )
        django.setup()
    else:
        settings.DATABASES["default"]["NAME"] = params["dbname"]


def test_every_python_snippet_runs(readme_project, db_url, capsys):
    _, snippets = readme_project
    flow = importlib.import_module("myapp.flows").flow

    _django(db_url)
    namespace: dict[str, Any] = {"__name__": "readme"}
    served: list[Flow] = []
    with ExitStack() as worker:
        worker.enter_context(running_worker(db_url, flow, install_flows=False))
        for index, code in enumerate(snippets):
            try:
                exec(compile(code, f"README.md python block {index + 1}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"README python block {index + 1} failed:\n{code}") from exc
            defined = [v for v in namespace.values() if isinstance(v, Flow) and v not in served]
            if defined:  # a block that defines flows: the next ones run them
                served += defined
                worker.close()
                worker.enter_context(running_worker(db_url, flow, *served))
        for client in [v for v in namespace.values() if type(v).__name__ == "Client"]:
            client.close()
    from django.db import connections

    connections.close_all()
    printed = capsys.readouterr().out
    assert "completed {'url': 'https://example.com'" in printed
    assert "{'run': 'order-7'}" in printed
    assert "{'ship': 'shipped, paid 30'}" in printed
    assert "'polls': 3" in printed, printed
    assert "[('billing', '$body'), ('billing', 'receipt')]" in printed
    assert "{'upload': 'uploaded for c9'} 12" in printed


def test_every_charter_command_in_the_readme_runs(readme_project, db_url):
    project, _ = readme_project
    template = TEMPLATES["invoice_approval"]
    (project / "contract.yaml").write_text(yaml.safe_dump(template.contract))
    (project / "org.yaml").write_text(yaml.safe_dump(template.org))
    (project / "input.json").write_text('{"url": "https://example.com", "pages": 1}')
    env = charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="development")
    env["PYTHONPATH"] = os.pathsep.join([str(project), env.get("PYTHONPATH", "")])

    def charter(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "charter", *shlex.split(line)[1:]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert charter("charter deploy myapp.flows").returncode == 0
    flow = importlib.import_module("myapp.flows").flow

    lines = []
    for block in _blocks("bash"):
        for raw in block.splitlines():
            line = raw.split("  #")[0].strip()
            if line.startswith("charter ") and not any(line.startswith(s) for s in NOT_RUN):
                lines.append(line)
    assert len(lines) >= 15
    with running_worker(db_url, flow, install_flows=False):
        started = charter(
            'charter run analyze_site --input \'{"url": "https://x.example", "pages": 1}\' --wait'
        )
        run_id = started.stderr.split()[1]
        version_id = _first_registry_version(project, env)
        for line in lines:
            line = line.replace("RUN_ID…", run_id).replace("RUN_ID", run_id)
            line = line.replace("VERSION_ID", version_id)
            result = charter(line)
            expected = {1} if "runs retry" in line else {0}  # a completed run is not retried
            assert result.returncode in expected, f"{line}\n{result.stderr}"
            assert "Traceback" not in result.stderr, line
    deleted = charter("charter flows delete analyze_site --yes")
    assert deleted.returncode == 0, deleted.stderr
    assert "deleted flow 'analyze_site'" in deleted.stdout


def _first_registry_version(project: Path, env: dict[str, str]) -> str:
    code = textwrap.dedent(
        """
        from charter import Client
        with Client() as client:
            made = client.registry.create_workflow_version("wf_readme", {"p": 1}, "m", "init")
            print(made.version_id)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
