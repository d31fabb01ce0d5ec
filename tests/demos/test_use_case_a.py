"""Use case A: a small invoice from a trusted vendor is approved by its workflow, posted by an
action, then locked; a large one waits for a person's approval."""

from __future__ import annotations

import psycopg
import pytest

from charter.errors import WorkflowEditLockedError, WorkflowGatePendingError


def test_the_fast_lane_approves_posts_and_locks(acme, engine):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 120, "vendor_id": "v-trusted"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    done = docs.wait(doc.id, timeout=20)
    assert done.state == "active"
    assert done.data["gl_batch"] == "GL-AUTO"
    assert done.workflow.status == "completed"
    history = [(e.action, e.actor, e.via) for e in docs.history(doc.id)]
    assert history == [
        ("create", "clerk", "api"),
        ("submit", "clerk", "api"),
        ("approve", "system", "workflow"),
        ("ap_invoice.post", "system", "workflow"),
    ]
    with pytest.raises(WorkflowEditLockedError):
        docs.update(doc.id, {"grand_total": 99}, actor="clerk")
    run = acme.get_run(done.workflow.run_id)
    fast = [s for s in run.steps if s.slug == "usr:slot:review:fast_lane"]
    assert len(fast) == 1 and fast[0].chosen_edge_ids == ["fast_lane->auto_approved"]
    assert fast[0].output["audit"]["result"] is True


def test_a_large_invoice_waits_for_an_approval_and_a_user_may_not_skip_it(acme, engine):
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    waiting = docs.wait(doc.id, timeout=20)
    assert waiting.state == "submitted"
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    assert "usr:slot:review:review" in waiting.workflow.current_nodes
    with pytest.raises(WorkflowGatePendingError, match="waits for: approval"):
        docs.transition(doc.id, "approve", actor="clerk", to="active")


def test_before_any_engine_starts_its_workflow_a_user_may_not_skip_the_body(acme):
    """No engine runs, so the invoice has no instance yet: the gate is still the workflow's
    to pass, because the org's workflow is the one its instance will follow."""
    docs = acme.documents
    doc = docs.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"}, actor="clerk")
    docs.transition(doc.id, "submit", actor="clerk")
    assert docs.get(doc.id).workflow.run_id is None
    with pytest.raises(WorkflowGatePendingError, match="when the body between state submitted"):
        docs.transition(doc.id, "approve", actor="clerk", to="active")
    assert docs.get(doc.id).state == "submitted"


def test_a_users_transition_under_an_org_workflow_calls_no_sql_helper(acme, db_url):
    """The gate check reads the org's workflow (its edges through SQL helpers) on every
    user's transition; a SQL helper PostgreSQL does not inline would be planned again in every
    transaction. track_functions counts only the calls that were not inlined."""
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"}, actor="clerk"
    )
    with psycopg.connect(db_url) as conn:
        conn.execute("SET track_functions = 'all'")
        conn.execute("SELECT charter.mutate('acme', 'submit', %s, NULL, 'clerk')", (doc.id,))
        conn.execute(
            "SELECT charter.mutate('acme', 'update', %s, '{\"grand_total\": 9100}', 'clerk')",
            (doc.id,),
        )  # an amend_only window: the update forces its on_amendment event
        called = conn.execute(
            "SELECT f.funcname, l.lanname FROM pg_stat_xact_user_functions AS f"
            " JOIN pg_proc AS p ON p.oid = f.funcid JOIN pg_language AS l ON l.oid = p.prolang"
        ).fetchall()
    assert ("_check_gate_not_pending", "plpgsql") in called
    assert ("_emit_event", "plpgsql") in called
    assert [name for name, language in called if language == "sql"] == []
