"""Workflow health: the report's figures match SQL on the same data; the stuck detector finds
an instance with nothing pending, and its ways out (nudge, rebuild, force-fail) work; API
keys are made by the owner, shown once, checked by the app role, and revoked."""

from __future__ import annotations

import time

import psycopg
import pytest

from charter.cli import main
from charter.db.store import perform
from charter.errors import ApiKeyInvalidError, PermissionDeniedError
from charter.ops.api_keys import authenticate_api_key, create_api_key
from tests import runtime_definitions as defs


def _waiting_memo(acme, code="H1"):
    if code == "H1":
        contract = defs.contract("memo", {"code": "string"})
        nodes = [
            ("hold", "wait_event", {"eventKey": "memo:{entity.code}"}),
            ("after", "script", {"expression": "true", "assignTo": "context.after"}),
        ]
        acme.definitions.publish(contract)
        org = defs.org_definition("memo", nodes, [("hold", "after", {})])
        acme.definitions.publish(contract, org)
    doc = acme.documents.create("memo", {"code": code}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    return acme.documents.wait(doc.id, timeout=20)


def test_the_report_matches_sql_on_the_same_data(acme, engine, sql):
    _waiting_memo(acme)
    acme.side_effects.webhook("http://127.0.0.1:9/x", {}, max_attempts=1)  # dies at once
    deadline = time.monotonic() + 20
    while not acme.dead_letters.list():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    report = acme.health.report()
    [(running, failed)] = sql(
        "SELECT count(*) FILTER (WHERE status = 'running'),"
        " count(*) FILTER (WHERE status = 'failed')"
        " FROM charter.workflow_instances WHERE org_id = 'acme'"
    )
    assert report.instances == {"running": running, "failed": failed} and running == 1
    [(dead, pending)] = sql(
        "SELECT count(*) FILTER (WHERE status = 'dead_letter' AND kind = 'effect'),"
        " count(*) FILTER (WHERE status IN ('pending', 'failed'))"
        " FROM charter.side_effects WHERE org_id = 'acme'"
    )
    assert (report.side_effects["deadLetters"], report.side_effects["pending"]) == (dead, pending)
    assert dead == 1
    [(workers,)] = sql(
        "SELECT count(*) FROM charter.workers WHERE stopped_at IS NULL"
        " AND last_heartbeat_at > now() - make_interval(secs => lease_seconds)"
    )
    assert report.workers_alive == workers >= 1
    [(p95,)] = sql(
        "SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at -"
        " started_at)) * 1000 FROM charter.step_executions WHERE org_id = 'acme' AND status ="
        " 'completed' AND started_at IS NOT NULL AND finished_at > now() - interval '1 hour'"
        " AND step_slug NOT LIKE '$%%' AND coalesce(node_type, '') NOT IN ('approval',"
        " 'lifecycle_state', 'wait_timer', 'wait_event', 'webhook_out', 'notification')"
    )
    assert report.step_latency_p95_ms == pytest.approx(p95)  # waits are left out
    assert report.stuck == []


def test_a_stuck_instance_is_found_nudged_rebuilt_and_force_failed(
    acme, engine, sql, db_url, capsys
):
    waiting = _waiting_memo(acme)
    run_id = waiting.workflow.run_id
    # As if its event had been applied but the engine never ran on: the wait is gone, the
    # next node is ready, and nothing happened for 20 minutes. Nothing will move it.
    sql("DELETE FROM charter.instance_waits WHERE run_id = %s", run_id)
    sql("UPDATE charter.step_states SET status = 'completed' WHERE run_id = %s"
        " AND step_slug = 'usr:slot:work:hold'", run_id)  # fmt: skip
    sql("UPDATE charter.step_states SET status = 'ready', token = 't1' WHERE run_id = %s"
        " AND step_slug = 'usr:slot:work:after'", run_id)  # fmt: skip
    sql("UPDATE charter.workflow_instances SET updated_at = now() - interval '20 minutes'"
        " WHERE id = %s", run_id)  # fmt: skip
    [stuck] = acme.health.stuck(minutes=10)
    assert (stuck.run_id, stuck.document_id) == (run_id, waiting.id) and stuck.idle_seconds > 1100
    assert stuck.reason == "node_not_run"  # a node ready that the engine never ran
    assert acme.health.stuck(minutes=30) == []
    assert main(["--database-url", db_url, "doctor", "--org", "acme"]) == 1
    said = capsys.readouterr().out
    assert run_id in said and "node_not_run" in said

    assert acme.health.nudge(run_id, actor="ops") is True  # the engine runs it again
    deadline = time.monotonic() + 20
    while not acme.documents.get(waiting.id).workflow.context.get("after"):
        assert time.monotonic() < deadline  # the engine ran the ready node
        time.sleep(0.05)
    assert acme.get_run(run_id).step("usr:slot:work:after").status == "completed"
    [(by,)] = sql("SELECT output->>'by' FROM charter.step_executions WHERE run_id = %s"
                  " AND output ? 'nudged'", run_id)  # fmt: skip
    assert by == "ops"  # the nudge is evidence, with who asked

    # Force-fail, on another one that is stuck.
    waiting = _waiting_memo(acme, "H2")
    run_id = waiting.workflow.run_id
    assert acme.health.rebuild(run_id) is True
    assert main(["--database-url", db_url, "doctor", "--org", "acme", "--force-fail", run_id]) == 1
    assert "--reason" in capsys.readouterr().err
    assert main(["--database-url", db_url, "doctor", "--org", "acme", "--force-fail", run_id,
                 "--reason", "lost its wait"]) == 0  # fmt: skip
    failed = acme.documents.get(waiting.id).workflow
    assert failed.status == "failed" and failed.error["code"] == "STUCK_FORCE_FAILED"
    assert "lost its wait" in failed.error["message"]
    assert acme.health.nudge(run_id) is False  # not running any more


def test_another_orgs_instance_is_out_of_reach(acme, engine, db_url):
    from charter import Client

    run_id = _waiting_memo(acme).workflow.run_id
    with Client(db_url, org_id="globex") as globex:
        assert globex.health.nudge(run_id) is False
        assert globex.health.force_fail(run_id, "no") is False
        assert globex.health.rebuild(run_id) is False
    assert acme.get_run(run_id).status == "running"


def test_api_keys_are_shown_once_checked_and_revoked(acme, db_url, login, capsys):
    assert main(["--database-url", db_url, "keys", "create", "--org", "acme", "--actor", "clerk",
                 "--label", "dashboard"]) == 0  # fmt: skip
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    assert secret.startswith("chk_")
    app_url = login("charter_app")
    with psycopg.connect(app_url, autocommit=True) as app:
        key = perform(app, authenticate_api_key(secret))
        assert key is not None and (key.org_id, key.actor) == ("acme", "clerk")
        assert perform(app, authenticate_api_key(secret + "x")) is None
        with pytest.raises(PermissionDeniedError):  # keys are made by the owner only
            perform(app, create_api_key("acme", "clerk", None, None))
    assert main(["--database-url", db_url, "keys", "list", "--org", "acme", "--json"]) == 0
    listed = capsys.readouterr().out
    assert key.id in listed and secret not in listed and "dashboard" in listed
    assert main(["--database-url", db_url, "keys", "revoke", key.id]) == 0
    with psycopg.connect(app_url, autocommit=True) as app:
        assert perform(app, authenticate_api_key(secret)) is None
    assert main(["--database-url", db_url, "keys", "revoke", key.id]) == 1


@pytest.mark.parametrize("actor", ["nobody", "bad actor!", "service:"])
def test_a_key_for_an_unknown_or_malformed_actor_is_refused(acme, db_url, actor):
    with psycopg.connect(db_url, autocommit=True) as owner, pytest.raises(ApiKeyInvalidError):
        perform(owner, create_api_key("acme", actor, None, None))
