"""Operating runs from the command line: run by slug, inputs from files and stdin, exit
codes, runs list/cancel/retry, workers, queue, flows delete, JSON logs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from tests.integration.helpers import charter_env

FLOWS = """
from charter import Flow

flow = Flow("ops_flow", max_attempts=1)

@flow.step
def check(run: dict, ctx) -> dict:
    ctx.logger.info("checking %s", run.get("n"))
    if run.get("fail"):
        raise ValueError("asked to fail")
    return {"n": run.get("n")}
"""


@pytest.fixture
def project(tmp_path, db_url):
    (tmp_path / "opsflows.py").write_text(textwrap.dedent(FLOWS))
    env = charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="production")

    def charter(*args: str, stdin: str | None = None, timeout: float = 60):
        return subprocess.run(
            [sys.executable, "-m", "charter", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
        )

    charter.env = env  # type: ignore[attr-defined]
    charter.cwd = tmp_path  # type: ignore[attr-defined]
    assert charter("deploy", "opsflows").returncode == 0
    return charter


def _start_worker(charter, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "opsflows", "--poll-interval", "0.2", *extra],
        cwd=charter.cwd,
        env=charter.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_run_by_slug_with_inputs_from_files_and_stdin_and_distinct_exit_codes(project, tmp_path):
    charter = project
    (tmp_path / "input.json").write_text('{"n": 7}')
    timed_out = charter("run", "ops_flow", "--input", "@input.json", "--wait", "--timeout", "0.5")
    assert timed_out.returncode == 5, timed_out.stderr  # no worker yet: the wait times out
    assert "RUN_WAIT_TIMEOUT" in timed_out.stderr
    worker = _start_worker(charter)
    try:
        ok = charter("run", "ops_flow", "--input", "-", "--wait", stdin='{"n": 8}')
        assert ok.returncode == 0, ok.stderr
        assert json.loads(ok.stdout) == {"check": {"n": 8}}
        assert ok.stderr.startswith("run ")  # the run id, before the output
        failed = charter("run", "ops_flow", "--input", '{"fail": true}', "--wait")
        assert failed.returncode == 4
        assert "failed: ValueError: asked to fail" in failed.stderr
        missing = charter("run", "ops_flow", "--input", "@nowhere.json")
        assert missing.returncode == 1 and "cannot read" in missing.stderr
        assert "Traceback" not in missing.stderr
    finally:
        worker.terminate()
        worker.wait(30)


def test_runs_list_cancel_retry_workers_and_queue(project):
    charter = project
    ids = [
        charter("run", "ops_flow", "--input", json.dumps({"n": n})).stdout.strip() for n in range(3)
    ]
    queue = charter("queue")
    assert queue.returncode == 0 and "ops_flow" in queue.stdout and "none" in queue.stdout
    as_json = json.loads(charter("queue", "--json").stdout)
    assert as_json[0]["ready"] == 3 and as_json[0]["serving_workers"] == 0
    cancelled = charter("runs", "cancel", ids[0], "no-such-run")
    assert cancelled.returncode == 1
    assert f"{ids[0]}: cancelled" in cancelled.stdout and "RUN_NOT_FOUND" in cancelled.stderr
    listed = json.loads(charter("runs", "list", "--json").stdout)
    assert [r["id"] for r in listed] == list(reversed(ids))
    page = charter("runs", "list", "--limit", "2")
    assert f"--after {ids[1]}" in page.stdout
    assert charter("runs", "list", "--status", "runing").returncode == 2  # argparse refuses
    worker = _start_worker(charter, "--concurrency", "3")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            workers = json.loads(charter("workers", "--json").stdout)
            if workers and json.loads(
                charter("runs", "list", "--status", "completed", "--json").stdout
            ):
                break
            time.sleep(0.2)
        assert workers[0]["alive"] and workers[0]["concurrency"] == 3
        assert workers[0]["orgs"] is None  # given no --org: every org
        assert "ops_flow" in charter("workers").stdout
        failing = charter("run", "ops_flow", "--input", '{"fail": true}', "--wait")
        failed_id = failing.stderr.split()[1]
        retried = charter("runs", "retry", failed_id)
        assert retried.returncode == 0 and f"{failed_id}: running" in retried.stdout
    finally:
        worker.terminate()
        output, _ = worker.communicate(timeout=30)
    assert "charter.step [run" in output and "checking 1" in output  # ctx.logger names the run
    assert "warning: run" in output  # the failed attempt is logged as a warning
    stopped = json.loads(charter("workers", "--all", "--json").stdout)
    assert stopped[0]["stopped_at"] is not None


def test_flows_delete_asks_and_needs_force_in_production(project):
    charter = project
    charter("run", "ops_flow", "--input", "{}")
    refused = charter("flows", "delete", "ops_flow", "--yes")
    assert refused.returncode == 1 and "--force" in refused.stderr
    no_terminal = charter("flows", "delete", "ops_flow", "--force")
    assert no_terminal.returncode == 1 and "add --yes" in no_terminal.stderr
    deleted = charter("flows", "delete", "ops_flow", "--force", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert "1 versions and 1 runs" in deleted.stdout
    again = charter("flows", "delete", "ops_flow", "--force", "--yes")
    assert again.returncode == 1 and "FLOW_NOT_FOUND" in again.stderr


def test_json_logs_carry_the_structured_fields(project):
    charter = project
    charter("run", "ops_flow", "--input", '{"fail": true}')
    env = {**charter.env, "CHARTER_LOG_FORMAT": "json", "CHARTER_CONCURRENCY": "2"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "opsflows", "--poll-interval", "0.2"],
        cwd=charter.cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(3)
    worker.terminate()
    output, _ = worker.communicate(timeout=30)
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert records and len(records) == len(output.splitlines())  # every line is JSON
    failed = [r for r in records if r.get("outcome") == "failed"]
    assert failed and {"worker", "run_id", "step", "attempt", "duration"} <= set(failed[0])
    assert failed[0]["level"] == "warning"
    assert any("concurrency 2" in r["message"] for r in records)  # CHARTER_CONCURRENCY


def test_read_only_commands_on_an_unmigrated_database_name_charter_migrate(empty_db_url):
    env = charter_env(CHARTER_DATABASE_URL=empty_db_url)
    for args in (["status", "r-1"], ["lineage", "v-1"], ["runs", "list"], ["workers"]):
        result = subprocess.run(
            [sys.executable, "-m", "charter", *args], env=env, capture_output=True, text=True
        )
        assert result.returncode == 1, (args, result.stderr)
        assert "SCHEMA_NOT_CURRENT" in result.stderr and "charter migrate" in result.stderr
        assert "Traceback" not in result.stderr


def test_environment_variables_configure_options_without_breaking_other_commands(project):
    charter = project
    env = {**charter.env, "CHARTER_CONCURRENCY": "lots", "CHARTER_YES": "1", "CHARTER_FORCE": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "charter", *args],
            cwd=charter.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert run("queue").returncode == 0  # a bad worker setting does not break other commands
    worker = run("worker", "opsflows", "--check-only")
    assert worker.returncode == 2 and "'lots' is not a whole number" in worker.stderr
    assert run("worker", "opsflows", "--check-only", "--concurrency", "2").returncode == 0
    # A deletion is never confirmed from the environment.
    refused = run("flows", "delete", "ops_flow")
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert "concurrency" in run("worker", "--help").stdout.lower()
