"""What a worker decides at start-up from the database's answers, over scripted replies
(tests/worker/seam.py): no PostgreSQL. What the SQL answers is tested on a real server in
tests/db/flows and tests/worker/test_worker_startup.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from charter.errors import (
    ArgumentError,
    FlowNotFoundError,
    FlowShapeMismatchError,
    PermissionDeniedError,
)
from charter.ops import flows as flow_ops
from charter.ops.workers import list_workers
from charter.worker import startup
from charter.worker.startup import check_published, prepare_flows
from tests.flows_for_tests import diamond, two_leaves
from tests.worker.seam import Script, json_reply, script


def _answers(by_slug):
    """A reply to a flow statement, by the flow's slug."""
    return lambda params: json_reply(by_slug[params["slug"]])


def test_prepare_flows_checks_every_flow_then_names_all_mismatches_at_once(monkeypatch):
    answers = {
        "diamond": {"status": "mismatch", "differences": ["step 'seed' was removed"]},
        "two_leaves": {"status": "mismatch", "differences": ["step 'c' was added"]},
    }
    scripted = script(monkeypatch, [flow_ops], {"ensure_flow_compiled": _answers(answers)})
    with pytest.raises(FlowShapeMismatchError) as caught:
        prepare_flows(None, [diamond(), two_leaves()], mode="production", spec="shop.flows")
    assert scripted.queries == ["ensure_flow_compiled", "ensure_flow_compiled"]
    message = str(caught.value)
    assert "'diamond', 'two_leaves'" in message
    assert "step 'seed' was removed" in message and "step 'c' was added" in message
    assert "charter deploy shop.flows" in message
    assert caught.value.differences == ["step 'seed' was removed", "step 'c' was added"]


def test_prepare_flows_deploys_with_deploy_and_returns_each_result(monkeypatch):
    answer = {"status": "deployed", "versionId": "v-2", "version": 2}
    scripted = script(monkeypatch, [flow_ops], {"deploy_flow": lambda params: json_reply(answer)})
    results = prepare_flows(None, [diamond()], mode="production", deploy=True)
    assert scripted.queries == ["deploy_flow"]
    assert scripted.calls[0].params["slug"] == "diamond"
    assert [(r.flow_slug, r.status, r.version_id, r.version) for r in results] == [
        ("diamond", "deployed", "v-2", 2)
    ]


def test_a_role_that_may_not_publish_is_refused_deploy_before_any_statement(monkeypatch):
    scripted = script(monkeypatch, [startup], {})
    with pytest.raises(PermissionDeniedError, match=r"charter deploy shop\.flows"):
        check_published(None, [diamond()], deploy=True, spec="shop.flows")
    assert scripted.calls == []


def test_missing_flows_are_named_before_mismatched_ones(monkeypatch):
    answers = {
        "diamond": {"status": "mismatch", "differences": ["step 'seed' was removed"]},
        "two_leaves": {"status": "missing"},
    }
    scripted = script(monkeypatch, [startup], {"check_flow": _answers(answers)})
    with pytest.raises(FlowNotFoundError) as caught:
        check_published(None, [diamond(), two_leaves()], deploy=False, spec="shop.flows")
    assert scripted.queries == ["check_flow", "check_flow"]
    assert "'two_leaves'" in str(caught.value) and "'diamond'" not in str(caught.value)
    assert "charter deploy shop.flows" in str(caught.value)


def test_list_workers_refuses_a_bad_argument_before_asking_and_reads_the_rows():
    with pytest.raises(ArgumentError, match="include_stopped must be True or False"):
        Script({}).run(list_workers("yes"))
    row = {
        "id": "w-1",
        "hostname": "h",
        "pid": 7,
        "flows": ["diamond"],
        "versions": ["v-1"],
        "orgs": None,
        "concurrency": 4,
        "claimed": 1,
        "alive": True,
        "startedAt": "2026-01-02T03:04:05+00:00",
        "lastHeartbeatAt": "2026-01-02T03:04:06+00:00",
        "stoppedAt": None,
    }
    scripted = Script({"list_workers": [(row,)]})
    [worker] = scripted.run(list_workers(False, dead_after_seconds=30))
    assert scripted.calls[0].params == {"include_stopped": False, "dead_after_seconds": 30}
    assert (worker.id, worker.orgs, worker.stopped_at) == ("w-1", None, None)
    assert worker.started_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
