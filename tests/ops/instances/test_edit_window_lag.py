"""An edit window holds the moment a transition commits, not once the engine has caught up:
an instance that has not applied the transition yet still rests at a node of the state the
document left, and its (looser) window must not let an edit into the locked state."""

from __future__ import annotations

import pytest

from charter import Client
from charter.errors import WorkflowEditLockedError
from tests import runtime_definitions as defs
from tests.ops.approvals.test_gate_approvals import ManualEngine


def test_a_document_moved_into_a_locked_state_is_locked_before_the_engine_sees_it(db_url, sql):
    engine = ManualEngine(sql)
    contract = defs.contract("memo", {"text": "string"})
    contract["states"][1]["editWindow"] = "locked"  # open: locked
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(contract)
        client.directory.put_user("clerk", roles=[])
        doc = client.documents.create("memo", {"text": "draft"}, actor="clerk")
        engine.settle()  # the instance rests at draft, whose window is editable
        client.documents.transition(doc.id, "open", actor="clerk")  # not applied yet
        with pytest.raises(WorkflowEditLockedError):
            client.documents.update(doc.id, {"text": "changed after it was locked"}, actor="clerk")
        moved = client.documents.amend(doc.id, {"text": "amended"}, actor="clerk")
        assert moved.amended_from == doc.id  # locked: an amendment, not an edit in place
        assert client.documents.get(doc.id).data == {"text": "draft"}
