"""Use cases B, D and E of seed 002, end to end with a worker and no humans."""

from __future__ import annotations

from datetime import timedelta


def _steps(client, doc):
    run = client.get_run(client.documents.get(doc.id).workflow.run_id)
    return {s.slug.rsplit(":", 1)[-1]: s for s in run.steps}


def test_b_the_any_join_lets_the_first_path_win_and_cancels_the_others(acme, engine, sql):
    docs = acme.documents
    order = {"order_id": "SO-1", "grand_total": 100, "credit_available": 5000}
    doc = docs.create("sales_order", order, actor="sales")
    docs.transition(doc.id, "submit", actor="sales")
    done = docs.wait(doc.id, timeout=20)
    assert (done.state, done.data["reserved"], done.workflow.status) == (
        "confirmed",
        True,
        "completed",
    )
    steps = _steps(acme, doc)
    assert steps["reserve_inventory"].status == "completed"
    for loser in ("backorder", "notify_warehouse"):
        assert steps[loser].status == "cancelled"
        assert steps[loser].error["join"] == "usr:slot:fulfil:first_done"
    assert steps["reserve_inventory"].token == "t1/usr:slot:fulfil:fan_out#0"
    assert steps["first_done"].token == "t1"
    # The cancelled notification never reached the side-effects outbox.
    assert sql("SELECT count(*) FROM charter.side_effects WHERE run_id = %s",
               done.workflow.run_id) == [(0,)]  # fmt: skip


def test_b_too_little_credit_waits_for_the_payment_event(acme, engine):
    docs = acme.documents
    order = {"order_id": "SO-2", "grand_total": 100, "credit_available": 10}
    doc = docs.create("sales_order", order, actor="sales")
    docs.transition(doc.id, "submit", actor="sales")
    waiting = docs.wait(doc.id, timeout=20)
    assert waiting.state == "submitted"
    [wait] = waiting.workflow.waiting_for
    assert (wait.kind, wait.detail["eventKey"]) == ("event", "payment:SO-2")
    sent = acme.events.send("payment:SO-2", {"amount": 100}, event_id="pay-1")
    assert (sent.status, sent.matched) == ("delivered", 1)
    assert acme.events.send("payment:SO-2", {"amount": 100}, event_id="pay-1").status == (
        "duplicate"
    )
    done = docs.wait(doc.id, timeout=20)
    assert done.state == "confirmed"
    assert done.workflow.context["event"] == {"amount": 100}


def test_d_an_event_sent_early_is_kept_and_one_never_sent_times_out_into_escalation(
    acme, engine, sql, mail
):
    docs = acme.documents
    early = docs.create("shipment", {"shipment_id": "S1", "carrier": "ACME"}, actor="sales")
    late = docs.create("shipment", {"shipment_id": "S2", "carrier": "ACME"}, actor="sales")
    # Proof of delivery for S1 arrives before its workflow waits for it.
    assert acme.events.send("delivery:pod:S1", {"signed_by": "Ann"}).status == "kept"
    for doc in (early, late):
        docs.transition(doc.id, "dispatch", actor="sales")
    delivered = docs.wait(early.id, timeout=20)
    assert (delivered.state, delivered.workflow.context["signed_by"]) == ("delivered", "Ann")

    waiting = docs.wait(late.id, timeout=20)
    [wait] = waiting.workflow.waiting_for
    assert (wait.kind, wait.detail["eventKey"]) == ("event", "delivery:pod:S2")
    acme.test_clock.advance(timedelta(hours=72, minutes=1))
    try:
        escalated = docs.wait(late.id, timeout=20)
    finally:
        acme.test_clock.reset()
    # The escalation email reaches the logistics manager (the local SMTP server); then the
    # escalation waits for their approval.
    assert [w.kind for w in escalated.workflow.waiting_for] == ["approval"]
    [(status, request)] = sql(
        "SELECT status, request FROM charter.side_effects WHERE run_id = %s",
        escalated.workflow.run_id,
    )
    assert status == "completed"
    assert request["recipients"] == [{"user": "boss", "address": "boss@example.com"}]
    [email] = mail.to("boss@example.com")
    assert email["subject"] == "Shipment S2 unconfirmed after 72h"
    assert email["body"] == "No proof of delivery from ACME for S2."
    steps = _steps(acme, late)
    assert steps["proof_of_delivery"].chosen_edge_ids == ["proof_of_delivery->escalate"]
    assert steps["proof_of_delivery"].output["timedOut"] is True
    assert steps["escalate"].output["delivery"]["response"]["delivered"] == ["boss@example.com"]
    assert escalated.state == "in_transit"


def test_e_a_timer_then_an_action_a_condition_and_a_webhook(acme, engine, sql):
    docs = acme.documents
    clean = docs.create(
        "royalty_period", {"franchisee": "F-9", "sales": 1200, "anomalies": False}, actor="sales"
    )
    odd = docs.create(
        "royalty_period", {"franchisee": "F-7", "sales": 90, "anomalies": True}, actor="sales"
    )
    for doc in (clean, odd):
        [wait] = docs.wait(doc.id, timeout=20, until="idle").workflow.waiting_for
        assert wait.kind == "timer"
    acme.test_clock.advance(timedelta(days=30, seconds=5))
    try:
        # Its webhook goes out to a portal that is not there: it waits for that delivery.
        clean_now = docs.wait(clean.id, timeout=20, until="idle")
        odd_now = docs.wait(odd.id, timeout=20)
    finally:
        acme.test_clock.reset()
    assert clean_now.data["statement_ready"] is True
    assert [w.kind for w in clean_now.workflow.waiting_for] == ["delivery"]
    assert [w.kind for w in odd_now.workflow.waiting_for] == ["approval"]
    [(request,)] = sql(
        "SELECT request FROM charter.side_effects WHERE run_id = %s", clean_now.workflow.run_id
    )
    assert request == {
        "url": "http://127.0.0.1:8080/franchisees/F-9/statements",
        "method": "POST",
        "headers": {},
        "body": {"franchisee": "F-9", "sales": 1200},
    }
    history = [(e.action, e.actor, e.via) for e in docs.history(clean.id)]
    assert history[-1] == ("royalty_period.generate_statement", "system", "workflow")
