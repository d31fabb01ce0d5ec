"""Python actions: an action type the contract does not declare runs a @charter.action
handler in a worker, at least once, on the pinned document version; its field patch goes
through mutate() when the node completes."""

from __future__ import annotations

import copy

import pytest

import charter
from charter import Client
from charter.demos.use_cases import royalty_contract, royalty_org
from charter.errors import ArgumentError
from tests.workers import running_worker

CALLS: list[tuple[int, int, str]] = []


def compute_fee(document, ctx: charter.ActionContext):
    CALLS.append((ctx.attempt, ctx.entity_version, ctx.idempotency_key))
    if ctx.attempt == 1:
        raise ConnectionError("the fee service is down")  # retried
    return {"fee": document["data"]["sales"] * ctx.payload["rate"]}


def _definitions():
    contract = royalty_contract()
    contract["fields"]["fee"] = "number"
    org = copy.deepcopy(royalty_org())
    nodes = org["slots"]["slot:cycle"]["nodes"]
    nodes[1] = {
        "id": "usr:slot:cycle:generate_statement",
        "type": "action",
        "config": {
            "actionType": "royalty_period.compute_fee",
            "runAs": "system",
            "payloadTemplate": {"rate": "0.05"},
        },
    }
    return contract, org


def test_a_python_action_runs_at_least_once_and_patches_through_mutate(db_url, monkeypatch):
    monkeypatch.setenv("CHARTER_MODE", "development")
    CALLS.clear()
    contract, org = _definitions()
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(contract)
        client.definitions.publish(contract, org)
        client.directory.put_user("u", roles=["sales"])
        actions = {"royalty_period.compute_fee": compute_fee}
        with running_worker(db_url, actions=actions, poll_interval=0.05):
            doc = client.documents.create(
                "royalty_period",
                {"franchisee": "F-1", "sales": 1000, "anomalies": False},
                actor="u",
            )
            client.documents.wait(doc.id, timeout=20, until="idle")  # at its timer
            client.test_clock.advance(31 * 86400)
            try:
                done = client.documents.wait(doc.id, timeout=20, until="idle")
            finally:
                client.test_clock.reset()
        assert done.data["fee"] == 50
        assert [w.kind for w in done.workflow.waiting_for] == ["delivery"]
        assert [(attempt, version) for attempt, version, _ in CALLS] == [(1, 1), (2, 1)]
        assert len({key for *_, key in CALLS}) == 1  # the same key on every attempt
        last = client.documents.history(doc.id)[-1]
        assert (last.action, last.actor, last.via) == (
            "royalty_period.compute_fee",
            "system",
            "workflow",
        )
        step = client.get_run(done.workflow.run_id).step("usr:slot:cycle:generate_statement")
        assert step.output["handler"]["patch"] == {"fee": 50}
        assert step.output["handler"]["attempts"] == 2


def test_action_types_are_checked_when_registered():
    with pytest.raises(ArgumentError, match=r"entity_type\.verb"):
        charter.action("Not A Type")
    charter.action("royalty_period.once")(compute_fee)
    with pytest.raises(ArgumentError, match="already has a handler"):
        charter.action("royalty_period.once")(lambda document, ctx: None)
