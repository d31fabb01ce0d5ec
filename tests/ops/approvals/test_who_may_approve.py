"""Who may approve (segregation of duties): the requester and the authors of the changes
since the last approved version are never among a request's approvers, a delegation to one
of them is not applied, nobody left is APPROVERS_EMPTY at once (the instance's error, what
it waits for, health), and a chain's stages each keep their own deadline and their own
deciders unless the chain allows the same approver."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from charter.errors import (
    ApprovalApproverExcludedError,
    ApprovalChainInvalidError,
    ApprovalSelfApprovalError,
)
from tests import runtime_definitions as defs


def _publish(client, entity_type, approval):
    contract = defs.contract(entity_type, {"amount": "number"})
    org = defs.org_definition(entity_type, [("ok", "approval", approval)], [])
    client.definitions.publish(contract)
    client.definitions.publish(contract, org)


def _opened(client, entity_type, *, creator, opener=None, edits=()):
    docs = client.documents
    doc = docs.create(entity_type, {"amount": 1}, actor=creator)
    for n, editor in enumerate(edits, start=2):
        docs.update(doc.id, {"amount": n}, actor=editor)
    docs.transition(doc.id, "open", actor=opener or creator)
    return docs.wait(doc.id, timeout=20)


def _pending(client, document_id):
    [request] = [r for r in client.approvals.history(document_id) if r.status == "pending"]
    return request


def test_an_all_approval_whose_role_holds_the_requester_closes_once_the_others_approve(
    acme, engine, sql
):
    _publish(acme, "capex", {"mode": "inline", "approvers": [{"role": "board"}],
                             "decision": "all"})  # fmt: skip
    acme.directory.put_user("author", roles=[])
    members = [f"b{i}" for i in range(5)]
    for member in members:
        acme.directory.put_user(member, roles=["board"])
    doc = _opened(acme, "capex", creator="author", opener="b0")  # b0 submits
    request = _pending(acme, doc.id)
    assert request.approvers == members[1:] and request.requester == "b0"
    assert request.excluded == {"b0": "requester"}
    assert acme.approvals.inbox("b0") == []  # nothing the requester could never decide
    outcomes: dict[str, object] = {}

    def decide(member: str) -> None:
        try:
            acme.approvals.decide(request.id, "approved", actor=member, entity_version=2)
            outcomes[member] = "ok"
        except Exception as exc:  # compared below
            outcomes[member] = exc

    threads = [threading.Thread(target=decide, args=(m,)) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert isinstance(outcomes.pop("b0"), ApprovalSelfApprovalError)  # still refused at decide
    assert outcomes == dict.fromkeys(members[1:], "ok")
    assert acme.documents.wait(doc.id, timeout=20).state == "done"
    assert sql("SELECT count(*) FROM charter.document_audit WHERE action = 'close'") == [(1,)]


def test_a_clerk_who_edited_the_content_cannot_approve_when_someone_else_submits(acme, engine):
    _publish(acme, "bill", {"mode": "inline", "approvers": [{"role": "ap"}]})
    for user in ("maker", "editor", "submitter", "checker"):
        acme.directory.put_user(user, roles=["ap"])
    doc = _opened(acme, "bill", creator="maker", opener="submitter", edits=["editor"])
    request = _pending(acme, doc.id)
    assert (request.entity_version, request.approvers) == (3, ["checker"])
    assert request.excluded == {
        "maker": "authored version 1",
        "editor": "authored version 2",
        "submitter": "requester",
    }
    assert acme.approvals.inbox("editor") == []
    with pytest.raises(ApprovalApproverExcludedError, match="editor authored version 2"):
        acme.approvals.decide(request.id, "approved", actor="editor", entity_version=3)
    with pytest.raises(ApprovalSelfApprovalError, match="submitter asked"):
        acme.approvals.decide(request.id, "approved", actor="submitter", entity_version=3)
    acme.approvals.decide(request.id, "approved", actor="checker", entity_version=3)
    assert acme.documents.wait(doc.id, timeout=20).state == "done"


def test_a_delegation_to_the_requester_is_not_applied(acme, engine):
    _publish(acme, "leave", {"mode": "inline", "approvers": [{"role": "lead"}]})
    acme.directory.put_user("author", roles=[])
    acme.directory.put_user("lead1", roles=["lead"])
    acme.directory.put_user("asker", roles=[])
    acme.approvals.delegate("lead1", to="asker", ends_at=datetime.now(UTC) + timedelta(days=7))
    doc = _opened(acme, "leave", creator="author", opener="asker")
    request = _pending(acme, doc.id)
    assert request.approvers == ["lead1"] and request.delegated == {}  # lead1 keeps it
    assert request.excluded == {"asker": "requester"}
    assert acme.approvals.inbox("asker") == []
    with pytest.raises(ApprovalSelfApprovalError):
        acme.approvals.decide(request.id, "approved", actor="asker", entity_version=2)
    acme.approvals.decide(request.id, "approved", actor="lead1", entity_version=2)
    assert acme.documents.wait(doc.id, timeout=20).state == "done"


def test_a_role_of_excluded_people_only_fails_at_once_with_approvers_empty(acme, engine):
    _publish(acme, "grant", {"mode": "inline", "approvers": [{"role": "finance"}]})
    acme.directory.put_user("fin1", roles=["finance"])
    acme.directory.put_user("fin2", roles=["finance"])
    doc = _opened(acme, "grant", creator="fin1", opener="fin2")  # an author and the requester
    workflow = doc.workflow
    assert workflow.status == "failed"
    assert workflow.error["code"] == "APPROVERS_EMPTY"
    assert "fin1 (authored version 1), fin2 (requester)" in workflow.error["message"]
    assert acme.approvals.history(doc.id) == []  # no request anyone could never decide
    [fix] = workflow.waiting_for
    assert (fix.kind, fix.node, fix.detail["code"]) == (
        "fix", "usr:slot:work:ok", "APPROVERS_EMPTY",
    )  # fmt: skip
    [failure] = acme.health.report().failures
    assert (failure.run_id, failure.node, failure.code) == (
        workflow.run_id, "usr:slot:work:ok", "APPROVERS_EMPTY",
    )  # fmt: skip
    # The fix the error names: someone else gets the role, and the instance is retried.
    acme.directory.put_user("fin3", roles=["finance"])
    acme.retry(workflow.run_id)
    retried = acme.documents.wait(doc.id, timeout=20).workflow
    assert retried.status == "running" and [w.kind for w in retried.waiting_for] == ["approval"]
    assert _pending(acme, doc.id).approvers == ["fin3"]


def _chain_people(client):
    client.directory.put_user("author", roles=[])
    client.directory.put_user("asker", roles=[])
    client.directory.put_user("director", roles=[])
    client.directory.put_user("vp", roles=[])
    client.directory.put_user("mgr", roles=["manager", "senior"], manager="director")
    client.directory.put_user("cfo", roles=["senior"], manager="vp")


def test_each_chain_stage_escalates_after_its_own_deadline_from_when_it_opened(acme, engine):
    _chain_people(acme)
    acme.approvals.define_chain(
        "two-step",
        [{"approvers": [{"user": "mgr"}]}, {"approvers": [{"user": "cfo"}]}],
    )
    _publish(acme, "trip", {"mode": "chain", "chainId": "two-step", "escalateAfter": "PT48H"})
    doc = _opened(acme, "trip", creator="author", opener="asker")
    first = _pending(acme, doc.id)
    try:
        acme.test_clock.advance(timedelta(hours=40))
        acme.approvals.decide(first.id, "approved", actor="mgr", entity_version=2)
        second = _pending(acme, doc.id)
        [wait] = acme.documents.wait(doc.id, timeout=20).workflow.waiting_for
        assert wait.detail["stage"] == 1 and wait.detail["requestId"] == second.id
        # 50 hours after the chain started, 10 after stage two opened: not due yet.
        acme.test_clock.advance(timedelta(hours=10))
        acme.documents.wait(doc.id, timeout=20)
        assert acme.approvals.get(second.id).escalated_at is None
        # 49 hours after stage two opened: its approver's manager has it now.
        acme.test_clock.advance(timedelta(hours=39))
        acme.documents.wait(doc.id, timeout=20)
    finally:
        acme.test_clock.reset()
    escalated = acme.approvals.get(second.id)
    assert escalated.approvers == ["vp"] and escalated.escalated_at is not None


def test_a_stage_after_an_escalated_one_still_gets_its_deadline(acme, engine):
    _chain_people(acme)
    acme.approvals.define_chain(
        "two-step",
        [{"approvers": [{"user": "mgr"}]}, {"approvers": [{"user": "cfo"}]}],
    )
    _publish(acme, "trip", {"mode": "chain", "chainId": "two-step", "escalateAfter": "PT48H"})
    doc = _opened(acme, "trip", creator="author", opener="asker")
    first = _pending(acme, doc.id)
    try:
        acme.test_clock.advance(timedelta(hours=49))
        acme.documents.wait(doc.id, timeout=20)
        assert acme.approvals.get(first.id).approvers == ["director"]  # stage one escalated
        acme.approvals.decide(first.id, "approved", actor="director", entity_version=2)
        second = _pending(acme, doc.id)
        [wait] = acme.documents.wait(doc.id, timeout=20).workflow.waiting_for
        assert "escalated" not in wait.detail and wait.detail["approvers"] == ["cfo"]
        acme.test_clock.advance(timedelta(hours=49))
        acme.documents.wait(doc.id, timeout=20)
    finally:
        acme.test_clock.reset()
    assert acme.approvals.get(second.id).approvers == ["vp"]


def test_one_person_decides_two_stages_of_a_chain_only_when_the_chain_allows_it(acme, engine):
    _chain_people(acme)
    stages = [{"approvers": [{"role": "manager"}]}, {"approvers": [{"role": "senior"}]}]
    acme.approvals.define_chain("ladder", stages)
    _publish(acme, "po", {"mode": "chain", "chainId": "ladder"})
    doc = _opened(acme, "po", creator="author", opener="asker")
    first = _pending(acme, doc.id)
    acme.approvals.decide(first.id, "approved", actor="mgr", entity_version=2)
    second = _pending(acme, doc.id)
    assert second.approvers == ["cfo"] and second.excluded == {"mgr": "decided stage 1"}
    with pytest.raises(ApprovalApproverExcludedError, match="mgr decided stage 1 of chain ladder"):
        acme.approvals.decide(second.id, "approved", actor="mgr", entity_version=2)
    acme.approvals.decide(second.id, "approved", actor="cfo", entity_version=2)
    assert acme.documents.wait(doc.id, timeout=20).state == "done"

    stored = acme.approvals.define_chain("ladder", stages, allow_same_approver=True)
    assert (stored["version"], stored["allowSameApprover"]) == (2, True)
    doc = _opened(acme, "po", creator="author", opener="asker")
    first = _pending(acme, doc.id)
    acme.approvals.decide(first.id, "approved", actor="mgr", entity_version=2)
    second = _pending(acme, doc.id)
    assert second.approvers == ["cfo", "mgr"]
    acme.approvals.decide(second.id, "approved", actor="mgr", entity_version=2)
    assert acme.documents.wait(doc.id, timeout=20).state == "done"


def test_a_next_stage_nobody_else_may_decide_fails_the_instance_and_keeps_the_decision(
    acme, engine
):
    _chain_people(acme)
    acme.approvals.define_chain(
        "same-people", [{"approvers": [{"user": "mgr"}]}, {"approvers": [{"user": "mgr"}]}]
    )
    _publish(acme, "po", {"mode": "chain", "chainId": "same-people"})
    doc = _opened(acme, "po", creator="author", opener="asker")
    first = _pending(acme, doc.id)
    result = acme.approvals.decide(first.id, "approved", actor="mgr", entity_version=2)
    assert result["requestStatus"] == "approved" and result["error"]["code"] == "APPROVERS_EMPTY"
    workflow = acme.documents.wait(doc.id, timeout=20).workflow
    assert workflow.status == "failed" and workflow.error["code"] == "APPROVERS_EMPTY"
    assert "mgr (decided stage 1)" in workflow.error["message"]
    [stage_one] = acme.approvals.history(doc.id)  # and no stage two nobody could decide
    assert stage_one.status == "approved"
    assert [(d.actor, d.decision) for d in stage_one.decisions] == [("mgr", "approved")]


@pytest.mark.parametrize(
    ("stages", "options", "message"),
    [
        ([{"aprovers": [{"role": "x"}]}], {}, "Stage 1 of chain c has 'aprovers'"),
        ([{"approvers": [{"role": "x"}]}, {"approvers": []}], {}, "Stage 2 of chain c has no"),
        ([{"approvers": [{"role": "x"}], "decision": "most"}], {}, 'decision "most"'),
        ([{"approvers": [{"role": ""}]}], {}, 'approver {"role": ""}'),
        ([{"approvers": [{"role": "x", "user": "y"}]}], {}, "is not one of"),
        ([{"approvers": [{"managerOf": "author"}]}], {}, '{"managerOf": "requester"}'),
        (["manager"], {}, "Stage 1 of chain c is not an object"),
        ([{"approvers": [{"role": "x"}]}], {"allow_same_approver": "yes"}, "True or False"),
    ],
)  # fmt: skip
def test_a_bad_chain_is_refused_naming_the_stage_and_what_is_wrong(acme, stages, options, message):
    with pytest.raises(ApprovalChainInvalidError, match=message):
        acme.approvals.define_chain("c", stages, **options)


def test_only_the_authors_since_the_last_approved_version_are_left_out(acme, engine):
    def slot(n: int, entry: str, exit_: str) -> dict[str, object]:
        return {"slotId": f"slot:r{n}", "entryNodeId": entry, "exitNodeId": exit_,
                "defaultEditWindow": "editable", "stableRegion": False}  # fmt: skip

    contract = {
        "entityType": "spec",
        "version": 1,
        "states": [
            {"id": "draft", "editWindow": "editable"},
            {"id": "review", "editWindow": "editable"},
            {"id": "agreed", "editWindow": "editable"},
            {"id": "review2", "editWindow": "editable"},
            {"id": "done", "editWindow": "locked", "final": True},
        ],
        "transitions": [
            {"from": "draft", "to": "review", "gate": "submit"},
            {"from": "review", "to": "agreed", "gate": "agree"},
            {"from": "agreed", "to": "review2", "gate": "resubmit"},
            {"from": "review2", "to": "done", "gate": "finish"},
        ],
        "slots": [
            slot(1, "sys:state:review", "sys:gate:agree"),
            slot(2, "sys:state:review2", "sys:gate:finish"),
        ],
        "fields": {"amount": "number"},
        "policies": {"*": {"rule": "true"}},
    }
    approval = {"mode": "inline", "approvers": [{"role": "ap"}]}
    org = {
        "baseRef": {"entityType": "spec", "envelopeVersion": 1},
        "slots": {
            f"slot:r{n}": {
                "nodes": [{"id": f"usr:slot:r{n}:ok", "type": "approval", "config": approval}],
                "edges": [],
                "exitEdgeMode": "join",
            }
            for n in (1, 2)
        },
    }
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    for user in ("alice", "bob", "carol", "dave"):
        acme.directory.put_user(user, roles=["ap"])
    docs = acme.documents
    doc = docs.create("spec", {"amount": 1}, actor="alice")  # version 1
    docs.transition(doc.id, "submit", actor="bob")  # version 2
    docs.wait(doc.id, timeout=20)
    first = _pending(acme, doc.id)
    assert first.approvers == ["carol", "dave"]
    assert first.excluded == {"alice": "authored version 1", "bob": "requester"}
    acme.approvals.decide(first.id, "approved", actor="carol", entity_version=2)
    assert docs.wait(doc.id, timeout=20).state == "agreed"  # the gate: version 3
    docs.update(doc.id, {"amount": 2}, actor="dave")  # version 4
    docs.transition(doc.id, "resubmit", actor="bob")  # version 5
    docs.wait(doc.id, timeout=20)
    second = _pending(acme, doc.id)
    # alice's version 1 was approved already; dave's change since then was not.
    assert second.approvers == ["alice", "carol"]
    assert second.excluded == {"bob": "requester", "dave": "authored version 4"}
    assert acme.approvals.diff(second.id)["changes"] == {"amount": {"from": 1, "to": 2}}
    with pytest.raises(ApprovalApproverExcludedError, match="dave authored version 4"):
        acme.approvals.decide(second.id, "approved", actor="dave", entity_version=5)
    acme.approvals.decide(second.id, "approved", actor="alice", entity_version=5)
    assert docs.wait(doc.id, timeout=20).state == "done"


def test_escalation_never_hands_a_request_to_its_requester(acme, engine):
    _publish(acme, "claim", {"mode": "inline", "approvers": [{"user": "lead"}],
                             "escalateAfter": "PT48H"})  # fmt: skip
    acme.directory.put_user("author", roles=[])
    acme.directory.put_user("head", roles=[])
    acme.directory.put_user("asker", roles=[], manager="head")
    acme.directory.put_user("lead", roles=[], manager="asker")  # the requester is lead's manager
    doc = _opened(acme, "claim", creator="author", opener="asker")
    request = _pending(acme, doc.id)
    try:
        acme.test_clock.advance(timedelta(hours=49))
        acme.documents.wait(doc.id, timeout=20)
    finally:
        acme.test_clock.reset()
    kept = acme.approvals.get(request.id)
    assert kept.approvers == ["lead"] and kept.escalated_at is None  # nobody else to go to
    assert acme.approvals.inbox("asker") == []
