"""Approvals bound to a version (WF-03): the large-invoice lane approved and consumed by the
gate, a rejection back to draft with its reason, an edit voiding the pending decision, every
refusal with the input that causes it, concurrent decisions on an `all` request, and chains."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from charter import Client
from charter.demos.use_cases import invoice_contract, invoice_lanes_org
from charter.errors import (
    ApprovalAlreadyDecidedError,
    ApprovalChainInvalidError,
    ApprovalClosedError,
    ApprovalNotApproverError,
    ApprovalNotFoundError,
    ApprovalSelfApprovalError,
    ApprovalVersionStaleError,
    ArgumentError,
    WorkflowEditLockedError,
)
from charter.library.templates import TEMPLATES
from tests import runtime_definitions as defs


@pytest.fixture
def reviewers(acme):
    acme.directory.put_user("reviewer", roles=["ap_clerk"])
    acme.directory.put_user("outsider", roles=[])
    return acme


def _waiting_invoice(client, total=9000):
    docs = client.documents
    doc = docs.create("ap_invoice", {"grand_total": total, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    waiting = docs.wait(doc.id, timeout=20)
    [request] = [r for r in client.approvals.history(doc.id) if r.status == "pending"]
    return waiting, request


def test_an_approval_on_the_pinned_version_passes_the_gate_and_is_consumed(reviewers, engine):
    client = reviewers
    waiting, request = _waiting_invoice(client)
    assert (request.entity_version, request.requester) == (2, "clerk")
    # Everyone with the role, fixed now, but the requester: who asked never approves.
    assert request.approvers == ["reviewer"]
    assert request.excluded == {"clerk": "requester"}
    assert [r.id for r in client.approvals.inbox("reviewer")] == [request.id]
    assert client.approvals.snapshot(request.id)["data"]["grand_total"] == 9000
    result = client.approvals.decide(
        request.id, "approved", actor="reviewer", entity_version=2, comment="ok"
    )
    assert result["requestStatus"] == "approved"
    done = client.documents.wait(waiting.id, timeout=20)
    assert (done.state, done.data["gl_batch"]) == ("active", "GL-AUTO")  # posted and locked
    [decision] = client.approvals.get(request.id).decisions
    assert decision.applied_by == "sys:gate:approve" and decision.applied_at is not None
    assert client.approvals.inbox("reviewer") == []
    gate = client.get_run(done.workflow.run_id).step("sys:gate:approve")
    assert gate.output["appliedDecisions"] == [decision.id]
    with pytest.raises(ApprovalClosedError):
        client.approvals.decide(request.id, "approved", actor="clerk", entity_version=2)


def test_a_rejection_sends_the_invoice_back_to_draft_with_the_reason(reviewers, engine):
    client = reviewers
    waiting, request = _waiting_invoice(client)
    client.approvals.decide(
        request.id, "rejected", actor="reviewer", entity_version=2, comment="wrong vendor"
    )
    back = client.documents.wait(waiting.id, timeout=20)
    assert back.state == "draft"
    last = client.documents.history(waiting.id)[-1]
    assert (last.action, last.actor) == ("approve", "system")
    assert "reviewer rejected: wrong vendor" in last.reason
    assert [w.kind for w in back.workflow.waiting_for] == ["transition"]


def test_an_edit_during_approval_voids_it_and_asks_again_on_the_new_version(reviewers, engine):
    client = reviewers
    waiting, request = _waiting_invoice(client)
    client.documents.update(waiting.id, {"grand_total": 9100}, actor="clerk")  # amend_only
    again = client.documents.wait(waiting.id, timeout=20)
    assert [w.kind for w in again.workflow.waiting_for] == ["approval"]
    old = client.approvals.get(request.id)
    assert (old.status, old.voided_version) == ("voided", 3)
    with pytest.raises(ApprovalVersionStaleError, match="at version 3 now"):
        client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    [fresh] = client.approvals.inbox("reviewer")
    assert fresh.entity_version == 3 and fresh.id != request.id
    assert client.approvals.diff(fresh.id)["changes"]["grand_total"] == {"from": 9000, "to": 9100}


def test_every_refusal_names_its_cause_and_records_nothing(reviewers, engine, sql):
    client = reviewers
    _, request = _waiting_invoice(client)
    decide = client.approvals.decide
    with pytest.raises(ApprovalNotApproverError, match="outsider"):
        decide(request.id, "approved", actor="outsider", entity_version=2)
    with pytest.raises(ApprovalSelfApprovalError, match="clerk asked"):
        decide(request.id, "approved", actor="clerk", entity_version=2)
    with pytest.raises(ApprovalVersionStaleError, match="for version 2"):
        decide(request.id, "approved", actor="reviewer", entity_version=1)
    with pytest.raises(ApprovalNotFoundError):
        decide("no-such-request", "approved", actor="reviewer", entity_version=2)
    with pytest.raises(ArgumentError, match="approved, rejected, abstained"):
        decide(request.id, "yes", actor="reviewer", entity_version=2)
    with pytest.raises(ArgumentError, match="bound to a version"):
        decide(request.id, "approved", actor="reviewer", entity_version="2")
    assert sql("SELECT count(*) FROM charter.approval_decisions") == [(0,)]
    decide(request.id, "abstained", actor="reviewer", entity_version=2)
    with pytest.raises(ApprovalAlreadyDecidedError):
        decide(request.id, "approved", actor="reviewer", entity_version=2)
    with pytest.raises(Exception, match="append-only"):
        sql("DELETE FROM charter.approval_decisions")


def test_concurrent_decisions_on_an_all_request_pass_the_gate_once(db_url, engine, sql):
    contract = defs.contract("capex", {"amount": "number"})
    org = defs.org_definition(
        "capex",
        [("board", "approval", {"mode": "inline", "approvers": [{"role": "board"}],
                                "decision": "all"})],
        [],
    )  # fmt: skip
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(contract)
        client.definitions.publish(contract, org)
        client.directory.put_user("owner", roles=[])
        members = [f"b{i}" for i in range(6)]
        for member in members:
            client.directory.put_user(member, roles=["board"])
        doc = client.documents.create("capex", {"amount": 10**6}, actor="owner")
        client.documents.transition(doc.id, "open", actor="owner")
        client.documents.wait(doc.id, timeout=20)
        [request] = client.approvals.inbox("b0")
        errors: list[Exception] = []

        def vote(member: str) -> None:
            try:
                client.approvals.decide(request.id, "approved", actor=member, entity_version=2)
            except Exception as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=vote, args=(m,)) for m in members]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        done = client.documents.wait(doc.id, timeout=20)
        assert done.state == "done"
    assert sql("SELECT count(*) FROM charter.approval_decisions WHERE request_id = %s",
               request.id) == [(6,)]  # fmt: skip
    passes = sql("SELECT count(*) FROM charter.document_audit WHERE action = 'close'")
    assert passes == [(1,)]
    [(applied,)] = sql(
        "SELECT count(*) FROM charter.approval_decisions WHERE applied_by = 'sys:gate:close'"
    )
    assert applied == 6


def test_the_templates_lanes_parallel_role_and_rule_approvals_and_a_chain(db_url, engine):
    template = TEMPLATES["invoice_approval"]
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(template.contract)
        client.definitions.publish(template.contract, template.org)
        client.directory.put_user("clerk", roles=["clerk"])
        client.directory.put_user("fm", roles=["finance_manager"])
        client.directory.put_user("cc-7", roles=[])  # the budget owner: the cost center's id
        client.directory.put_user("mgr", roles=["manager"])
        client.directory.put_user("cfo", roles=["cfo"])
        client.approvals.define_chain(
            "ap_standard",
            [{"approvers": [{"role": "manager"}], "decision": "any"},
             {"approvers": [{"role": "cfo"}], "decision": "all"}],
        )  # fmt: skip
        docs = client.documents
        big = docs.create("invoice", {"grand_total": 50000, "cost_center": "cc-7"}, actor="clerk")
        docs.transition(big.id, "submit", actor="clerk")
        docs.wait(big.id, timeout=20)
        assert {r.approvers[0] for r in client.approvals.history(big.id)} == {"fm", "cc-7"}
        for approver in ("fm", "cc-7"):
            [request] = client.approvals.inbox(approver)
            client.approvals.decide(request.id, "approved", actor=approver, entity_version=2)
        assert docs.wait(big.id, timeout=20).state == "active"  # both were needed

        small = docs.create("invoice", {"grand_total": 800, "cost_center": "cc-7"}, actor="clerk")
        docs.transition(small.id, "submit", actor="clerk")
        docs.wait(small.id, timeout=20)
        [first] = client.approvals.inbox("mgr")
        result = client.approvals.decide(first.id, "approved", actor="mgr", entity_version=2)
        assert "nextRequestId" in result  # stage two: the CFO
        assert docs.wait(small.id, timeout=20).state == "submitted"
        [second] = client.approvals.inbox("cfo")
        client.approvals.decide(second.id, "approved", actor="cfo", entity_version=2)
        assert docs.wait(small.id, timeout=20).state == "active"


def test_delegation_sends_new_requests_to_the_delegate(reviewers, engine):
    client = reviewers
    client.directory.put_user("stand-in", roles=[])
    now = datetime.now(UTC)
    client.approvals.delegate("reviewer", to="stand-in", ends_at=now + timedelta(days=7))
    _, request = _waiting_invoice(client)
    assert "stand-in" in request.approvers and "reviewer" not in request.approvers
    assert request.delegated == {"reviewer": "stand-in"}
    with pytest.raises(ApprovalNotApproverError):
        client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    client.approvals.decide(request.id, "approved", actor="stand-in", entity_version=2)
    assert client.documents.wait(request.document_id, timeout=20).state == "active"
    with pytest.raises(ApprovalChainInvalidError):
        client.approvals.delegate("stand-in", to="stand-in", ends_at=now + timedelta(days=1))


def test_an_undecided_request_escalates_to_the_approvers_managers(acme, engine, sql):
    contract = defs.contract("trip", {"cost": "number"})
    org = defs.org_definition(
        "trip",
        [("ok", "approval", {"mode": "inline", "approvers": [{"managerOf": "requester"}],
                             "escalateAfter": "PT48H"})],
        [],
    )  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    acme.directory.put_user("boss2", roles=[], email="boss2@example.com")
    acme.directory.put_user("lead", roles=[], manager="boss2")
    acme.directory.put_user("dev", roles=[], manager="lead")
    doc = acme.documents.create("trip", {"cost": 900}, actor="dev")
    acme.documents.transition(doc.id, "open", actor="dev")
    acme.documents.wait(doc.id, timeout=20)
    [request] = acme.approvals.inbox("lead")  # the requester's manager
    acme.test_clock.advance(timedelta(hours=49))
    try:
        waiting = acme.documents.wait(doc.id, timeout=20)
    finally:
        acme.test_clock.reset()
    escalated = acme.approvals.get(request.id)
    assert escalated.approvers == ["boss2"] and escalated.escalated_at is not None
    assert escalated.delegated["escalatedFrom"] == ["lead"]
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    [(recipients,)] = sql(
        "SELECT request->'recipients' FROM charter.side_effects WHERE node_id LIKE %s"
        " AND request->>'channel' = 'email'",
        "%#escalation",
    )
    assert recipients == [{"user": "boss2", "address": "boss2@example.com"}]
    [note] = acme.notifications.list("boss2")  # and in the app
    assert note.subject == f"Approval escalated: trip {doc.id}"
    acme.approvals.decide(request.id, "approved", actor="boss2", entity_version=2)
    assert acme.documents.wait(doc.id, timeout=20).state == "done"


def test_amending_the_active_invoice_needs_approval_again(reviewers, engine):
    client = reviewers
    waiting, request = _waiting_invoice(client)
    client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    active = client.documents.wait(waiting.id, timeout=20)
    assert active.state == "active"
    amended = client.documents.amend(active.id, {"grand_total": 8000}, actor="clerk")
    client.documents.transition(amended.id, "submit", actor="clerk")
    again = client.documents.wait(amended.id, timeout=20)
    assert [w.kind for w in again.workflow.waiting_for] == ["approval"]
    [fresh] = client.approvals.inbox("reviewer")
    assert fresh.document_id == amended.id


def test_a_rejection_without_a_rejected_edge_skips_the_rest_of_its_path(acme, engine):
    contract = defs.contract("memo", {"text": "string"})
    contract["transitions"].append(
        {"from": "open", "to": "draft", "gate": "close", "label": "reject"}
    )
    org = defs.org_definition(
        "memo",
        [("ok", "approval", {"mode": "inline", "approvers": [{"user": "boss"}]}),
         ("after", "script", {"expression": "true", "assignTo": "context.after"})],
        [("ok", "after", {})],
    )  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    doc = acme.documents.create("memo", {"text": "hi"}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    acme.documents.wait(doc.id, timeout=20)
    [request] = acme.approvals.inbox("boss")
    acme.approvals.decide(request.id, "rejected", actor="boss", entity_version=2, comment="no")
    back = acme.documents.wait(doc.id, timeout=20)
    assert back.state == "draft"
    assert "after" not in back.workflow.context  # the script after the approval never ran
    step = acme.get_run(back.workflow.run_id).step("usr:slot:work:after")
    assert step.output["carried"] == "reject" and step.output["ran"] is False


def test_use_case_a_three_lanes_end_posted_and_locked(db_url, engine):
    with Client(db_url, org_id="lanes") as client:
        client.definitions.publish(invoice_contract())
        client.definitions.publish(invoice_contract(), invoice_lanes_org())
        for user, roles in (("clerk", ["ap_clerk"]), ("fm", ["finance_manager"]), ("cc-9", []),
                            ("mgr", ["manager"]), ("cfo", ["cfo"])):  # fmt: skip
            client.directory.put_user(user, roles=roles)
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        client.approvals.define_chain(
            "ap-standard",
            [
                {"approvers": [{"role": "manager"}]},
                {"approvers": [{"role": "cfo"}], "decision": "all"},
            ],
        )
        docs = client.documents

        def submitted(total, vendor="v-1"):
            data = {"grand_total": total, "vendor_id": vendor, "cost_center": "cc-9"}
            doc = docs.create("ap_invoice", data, actor="clerk")
            docs.transition(doc.id, "submit", actor="clerk")
            return docs.wait(doc.id, timeout=20)

        def approve(user, doc):
            [request] = [r for r in client.approvals.inbox(user) if r.document_id == doc.id]
            client.approvals.decide(request.id, "approved", actor=user, entity_version=2)

        fast = submitted(100, vendor="v-trusted")
        assert (fast.state, fast.data["gl_batch"]) == ("active", "GL-AUTO")

        big = submitted(50000)
        assert sorted(w.node for w in big.workflow.waiting_for) == [
            "usr:slot:review:budget_owner", "usr:slot:review:finance_manager",
        ]  # fmt: skip
        approve("fm", big)
        assert docs.wait(big.id, timeout=20).state == "submitted"  # both are needed
        approve("cc-9", big)
        big = docs.wait(big.id, timeout=20)
        assert (big.state, big.data["gl_batch"]) == ("active", "GL-AUTO")
        with pytest.raises(WorkflowEditLockedError):
            docs.update(big.id, {"grand_total": 1}, actor="clerk")

        mid = submitted(5000)
        approve("mgr", mid)
        approve("cfo", mid)
        mid = docs.wait(mid.id, timeout=20)
        assert (mid.state, mid.data["gl_batch"]) == ("active", "GL-AUTO")

        rejected = submitted(60000)
        approve("fm", rejected)
        [request] = [r for r in client.approvals.inbox("cc-9") if r.document_id == rejected.id]
        client.approvals.decide(
            request.id, "rejected", actor="cc-9", entity_version=2, comment="not my budget"
        )
        back = docs.wait(rejected.id, timeout=20)
        assert back.state == "draft" and "gl_batch" not in back.data
        assert "cc-9 rejected: not my budget" in (docs.history(rejected.id)[-1].reason or "")


def test_approvers_that_resolve_to_nobody_fail_the_instance_naming_the_rule(acme, engine):
    contract = defs.contract("grant", {"amount": "number"})
    org = defs.org_definition(
        "grant", [("ok", "approval", {"mode": "inline", "approvers": [{"role": "nobody"}]})], []
    )
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    doc = acme.documents.create("grant", {"amount": 1}, actor="sales")
    acme.documents.transition(doc.id, "open", actor="sales")
    failed = acme.documents.wait(doc.id, timeout=20).workflow
    assert failed.status == "failed" and failed.error["sqlstate"] == "CH051"  # APPROVERS_EMPTY
    assert "nobody" in failed.error["message"]


def test_a_pending_requests_approvers_do_not_move_with_the_directory(reviewers, engine):
    client = reviewers
    _, request = _waiting_invoice(client)
    client.directory.put_user("newcomer", roles=["ap_clerk"])  # joins after the request
    client.directory.put_user("reviewer", roles=[])  # loses the role after it
    assert client.approvals.inbox("newcomer") == []
    assert client.approvals.get(request.id).approvers == ["reviewer"]
    client.approvals.decide(request.id, "approved", actor="reviewer", entity_version=2)
    assert client.documents.wait(request.document_id, timeout=20).state == "active"
