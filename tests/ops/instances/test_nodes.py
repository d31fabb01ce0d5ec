"""Node types beyond the use cases: rule nodes and the rule store, an action run as the
user who drove the instance (its policy applies), a timer until a date from the document,
the test clock refused in production, and an amendment ending the original's instance."""

from __future__ import annotations

from datetime import timedelta

import pytest

from charter import Client
from charter.errors import (
    ExpressionError,
    ExprTypeMismatchError,
    ProductionClockError,
    RuleNotFoundError,
)
from charter.library.templates import TEMPLATES
from tests import runtime_definitions as defs


def _publish(client, contract, org):
    client.definitions.publish(contract)
    client.definitions.publish(contract, org)


@pytest.mark.parametrize("expression", ["'yes'", "42", "[true]", "actor"])
def test_a_rule_that_cannot_be_true_or_false_is_not_stored(acme, db_url, expression):
    """A rule node takes its true or false edge: a rule that can be neither would strand
    every document that reaches it, so the store refuses it (sync and async alike)."""
    import asyncio

    from charter import AsyncClient

    with pytest.raises(ExprTypeMismatchError, match="decides between true and false"):
        acme.rules.put("claims.odd", expression)

    async def put_async() -> None:
        async with AsyncClient(db_url, org_id="acme") as client:
            await client.rules.put("claims.odd", expression)

    with pytest.raises(ExprTypeMismatchError):
        asyncio.run(put_async())
    with pytest.raises(RuleNotFoundError):
        acme.rules.get("claims.odd")
    assert acme.rules.put("claims.odd", "context.flag").version == 1  # unknown type: may be


def test_a_rule_node_evaluates_the_orgs_latest_rule_and_names_its_version(acme, engine):
    contract = defs.contract("claim", {"amount": "number"})
    org = defs.org_definition(
        "claim",
        [("limit", "rule", {"ruleId": "claims.within_limit"}),
         ("auto", "script", {"expression": "true", "assignTo": "context.auto"}),
         ("manual", "approval", {"mode": "inline", "approvers": [{"user": "boss"}]})],
        [("limit", "auto", {"label": "true"}), ("limit", "manual", {"label": "false"})],
    )  # fmt: skip
    _publish(acme, contract, org)
    with pytest.raises(ExpressionError):
        acme.rules.put("claims.within_limit", "entity.amount <=")
    first = acme.rules.put("claims.within_limit", "entity.amount <= 100", "small claims pass")
    second = acme.rules.put("claims.within_limit", "entity.amount <= 50", "tightened")
    assert (first.version, second.version) == (1, 2)
    assert acme.rules.put("claims.within_limit", "entity.amount <= 50", "tightened").status == (
        "unchanged"
    )
    assert acme.rules.get("claims.within_limit", version=1).expression == "entity.amount <= 100"
    with pytest.raises(RuleNotFoundError):
        acme.rules.get("claims.unknown")
    doc = acme.documents.create("claim", {"amount": 80}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    waiting = acme.documents.wait(doc.id, timeout=20)
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]  # 80 > 50 now
    step = acme.get_run(waiting.workflow.run_id).step("usr:slot:work:limit")
    assert step.output["rule"] == {"id": "claims.within_limit", "version": 2}
    assert step.output["audit"]["result"] is False
    assert step.chosen_edge_ids == ["limit->manual"]


def test_a_missing_rule_fails_the_instance_naming_it(acme, engine):
    contract = defs.contract("claim2", {"amount": "number"})
    org = defs.org_definition("claim2", [("limit", "rule", {"ruleId": "nope"}),
                          ("ok", "script", {"expression": "true"})],
               [("limit", "ok", {})])  # fmt: skip
    _publish(acme, contract, org)
    doc = acme.documents.create("claim2", {"amount": 1}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed" and failed.error["sqlstate"] == "CH045"
    assert "'nope'" in failed.error["message"]


def test_an_action_run_as_the_actor_is_held_to_the_actors_policy(acme, engine):
    contract = defs.contract(
        "expense",
        {"amount": "number", "paid": "boolean"},
        actions=[{"actionType": "expense.pay", "fields": ["paid"]}],
        policies={"expense.pay": {"roles": ["treasurer"]}},
    )
    pay = {"actionType": "expense.pay", "runAs": "actor", "payloadTemplate": {"paid": "true"}}
    org = defs.org_definition("expense", [("pay", "action", pay)], [])
    _publish(acme, contract, org)
    acme.directory.put_user("treasurer", roles=["treasurer"])
    denied = acme.documents.create("expense", {"amount": 5}, actor="sales")
    acme.documents.transition(denied.id, "open", actor="sales")  # sales may not pay
    failed = acme.documents.wait(denied.id, timeout=20).workflow
    assert failed.status == "failed" and failed.error["sqlstate"] == "CH033"  # POLICY_DENIED
    allowed = acme.documents.create("expense", {"amount": 5}, actor="sales")
    acme.documents.transition(allowed.id, "open", actor="treasurer")
    done = acme.documents.wait(allowed.id, timeout=20)
    assert (done.state, done.data["paid"]) == ("done", True)
    paid = [e for e in acme.documents.history(allowed.id) if e.action == "expense.pay"]
    assert [(e.actor, e.via) for e in paid] == [("treasurer", "workflow")]


def test_a_timer_until_a_date_of_the_document(acme, engine):
    contract = defs.contract("loan", {"due": "string"})
    org = defs.org_definition("loan", [("until_due", "wait_timer", {"until": "entity.due"}),
                        ("remind", "script", {"expression": "true", "assignTo": "context.r"})],
               [("until_due", "remind", {})])  # fmt: skip
    _publish(acme, contract, org)
    doc = acme.documents.create("loan", {"due": "2099-01-01T00:00:00Z"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    [wait] = acme.documents.wait(doc.id, timeout=20, until="idle").workflow.waiting_for
    assert wait.kind == "timer" and wait.detail["until"].startswith("2099-01-01")
    bad = acme.documents.create("loan", {"due": "soon"}, actor="sales")
    acme.documents.transition(bad.id, "open", actor="sales")
    failed = acme.documents.wait(bad.id, timeout=20).workflow
    assert failed.error["sqlstate"] == "CH046" and "not a time" in failed.error["message"]


def test_the_test_clock_cannot_move_in_production(db_url, monkeypatch):
    monkeypatch.setenv("CHARTER_MODE", "production")
    with Client(db_url) as client, pytest.raises(ProductionClockError):
        client.test_clock.advance(timedelta(hours=1))


def test_an_amendment_cancels_the_originals_instance_and_starts_the_new_ones(db_url, engine):
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(TEMPLATES["invoice_approval"].contract)  # bare envelope
        client.directory.put_user("u", roles=["clerk", "finance_manager"])
        docs = client.documents
        doc = docs.create("invoice", {"grand_total": 10}, actor="u")
        docs.transition(doc.id, "submit", actor="u")
        docs.transition(doc.id, "approve", actor="u", to="active")
        active = docs.wait(doc.id, timeout=20)
        assert active.workflow.current_nodes == ["sys:state:active"]  # it may still be amended
        new = docs.amend(doc.id, {"grand_total": 12}, actor="u", reason="credit")
        old = docs.wait(doc.id, timeout=20).workflow
        assert (old.status, old.cancel_reason) == ("cancelled", "amended")
        fresh = docs.wait(new.id, timeout=20).workflow
        assert fresh.status == "running" and fresh.run_id != old.run_id
        assert fresh.current_nodes == ["sys:state:draft"]
