"""The rest of the public surface fed hostile arguments: the client's events, rules,
schedules, approvals, side effects, notifications, dead letters, tasks, health and instance
calls, and the operator's commands (keys, approvals, documents, schedules, dlq,
maintenance). Each answer is a result or a coded error; a refusal writes nothing (every
table hashes the same before and after)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import Client
from tests.fuzz.ledger import answered
from tests.fuzz.strategies import hostile_argument, hostile_text, hostile_value, settings_for
from tests.fuzz.test_cli_fuzz import cli_text, run_main
from tests.ops.documents.conftest import invoice_contract

LATER = datetime.now(UTC) + timedelta(days=1)


@pytest.fixture
def acme(db_url) -> Iterator[Client]:
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(invoice_contract())
        client.directory.put_user("u-1", roles=["clerk", "manager"])
        client.directory.put_user("u-2", roles=["manager"])
        client.documents.create("invoice", {"grand_total": 1}, actor="u-1", id="inv-1")
        yield client


Call = Callable[[Client, Any], Any]
CALLS: dict[str, Call] = {
    "event key": lambda c, v: c.events.send(v, {}),
    "event payload": lambda c, v: c.events.send("fuzz.key", v),
    "event id": lambda c, v: c.events.send("fuzz.key", {}, event_id=v),
    "event document": lambda c, v: c.events.send("fuzz.key", {}, document_id=v),
    "rule id": lambda c, v: c.rules.put(v, "true"),
    "rule expression": lambda c, v: c.rules.put("r1", v),
    "rule description": lambda c, v: c.rules.put("r1", "true", v),
    "rule get": lambda c, v: c.rules.get(v),
    "rule version": lambda c, v: c.rules.get("r1", version=v),
    "schedule name": lambda c, v: c.schedules.put(v, "0 * * * *", entity_type="invoice",
                                                   action="create"),
    "schedule cron": lambda c, v: c.schedules.put("s1", v, entity_type="invoice",
                                                   action="create"),
    "schedule target": lambda c, v: c.schedules.put("s1", "0 * * * *", flow=v),
    "schedule input": lambda c, v: c.schedules.put("s1", "0 * * * *", entity_type="invoice",
                                                    action="create", input=v),
    "schedule time zone": lambda c, v: c.schedules.put("s1", "0 * * * *", entity_type="invoice",
                                                        action="create", timezone=v),
    "schedule missed": lambda c, v: c.schedules.put("s1", "0 * * * *", entity_type="invoice",
                                                     action="create", missed=v),
    "schedule delete": lambda c, v: c.schedules.delete(v),
    "approvals inbox": lambda c, v: c.approvals.inbox(v),
    "approval get": lambda c, v: c.approvals.get(v),
    "approval decide id": lambda c, v: c.approvals.decide(v, "approve", actor="u-1",
                                                          entity_version=1),
    "approval decision": lambda c, v: c.approvals.decide("1", v, actor="u-1", entity_version=1),
    "approval actor": lambda c, v: c.approvals.decide("1", "approve", actor=v, entity_version=1),
    "approval version": lambda c, v: c.approvals.decide("1", "approve", actor="u-1",
                                                        entity_version=v),
    "approval history": lambda c, v: c.approvals.history(v),
    "delegate user": lambda c, v: c.approvals.delegate(v, to="u-2", ends_at=LATER),
    "delegate to": lambda c, v: c.approvals.delegate("u-1", to=v, ends_at=LATER),
    "delegate ends": lambda c, v: c.approvals.delegate("u-1", to="u-2", ends_at=v),
    "chain id": lambda c, v: c.approvals.define_chain(v, [{"approvers": {"role": "manager"}}]),
    "chain stages": lambda c, v: c.approvals.define_chain("c1", v),
    "webhook url": lambda c, v: c.side_effects.webhook(v, {}),
    "webhook body": lambda c, v: c.side_effects.webhook("http://127.0.0.1:9/x", v),
    "webhook method": lambda c, v: c.side_effects.webhook("http://127.0.0.1:9/x", method=v),
    "webhook headers": lambda c, v: c.side_effects.webhook("http://127.0.0.1:9/x", headers=v),
    "webhook key": lambda c, v: c.side_effects.webhook("http://127.0.0.1:9/x", idempotency_key=v),
    "webhook attempts": lambda c, v: c.side_effects.webhook("http://127.0.0.1:9/x",
                                                            max_attempts=v),
    "side effect get": lambda c, v: c.side_effects.get(v),
    "notifications": lambda c, v: c.notifications.list(v),
    "notifications limit": lambda c, v: c.notifications.list("u-1", limit=v),
    "mark read": lambda c, v: c.notifications.mark_read("u-1", v),
    "dead letters limit": lambda c, v: c.dead_letters.list(limit=v),
    "dead letters run": lambda c, v: c.dead_letters.list(run_id=v),
    "retry actor": lambda c, v: c.retry("inv-1", actor=v),
    "dead letters retry": lambda c, v: c.dead_letters.retry(v),
    "dead letters drop": lambda c, v: c.dead_letters.drop(v),
    "task type": lambda c, v: c.tasks.enqueue(v, {}),
    "task payload": lambda c, v: c.tasks.enqueue("db_function", v),
    "task at": lambda c, v: c.tasks.enqueue("email", {}, at=v),
    "email to": lambda c, v: c.tasks.send_email(v, "s", "b"),
    "email subject": lambda c, v: c.tasks.send_email("a@example.com", v, "b"),
    "email attempts": lambda c, v: c.tasks.send_email("a@example.com", "s", "b", max_attempts=v),
    "email status": lambda c, v: c.tasks.email_status(v),
    "health minutes": lambda c, v: c.health.report(stuck_minutes=v),
    "stuck minutes": lambda c, v: c.health.stuck(minutes=v),
    "waiting hours": lambda c, v: c.health.waiting_longer_than(hours=v),
    "waiting stuck minutes": lambda c, v: c.health.waiting_longer_than(stuck_minutes=v),
    "nudge": lambda c, v: c.health.nudge(v),
    "rebuild": lambda c, v: c.health.rebuild(v),
    "force fail": lambda c, v: c.health.force_fail(v, "stuck"),
    "force fail reason": lambda c, v: c.health.force_fail("inv-1", v),
    "get user": lambda c, v: c.directory.get_user(v),
    "remove user": lambda c, v: c.directory.remove_user(v),
    "pause": lambda c, v: c.documents.pause(v, actor="u-1"),
    "resume actor": lambda c, v: c.documents.resume("inv-1", actor=v),
    "restart": lambda c, v: c.documents.restart(v, actor="u-1"),
    "restart reason": lambda c, v: c.documents.restart("inv-1", actor="u-1", reason=v),
    "wait": lambda c, v: c.documents.wait(v, timeout=0),
    "wait until": lambda c, v: c.documents.wait("inv-1", timeout=1, until=v),
}  # fmt: skip


@settings_for(80)
@given(which=st.sampled_from(sorted(CALLS)), value=st.one_of(hostile_argument, hostile_value))
def test_every_other_client_call_answers_hostile_arguments_with_a_code(acme, db_url, which, value):
    answered("client", db_url, lambda: CALLS[which](acme, value))


numbers = st.one_of(st.sampled_from(["0", "-1", "x", "9" * 30, "1e3", "", "2147483648"]), cli_text)


@st.composite
def commands(draw: st.DrawFn) -> list[str]:
    text = st.one_of(cli_text, st.sampled_from(["acme", "u-1", "inv-1", "service:ops"]))
    org = ["--org", draw(text)] if draw(st.booleans()) else ["--org", "acme"]
    kind = draw(st.sampled_from(["keys", "approvals", "documents", "schedules", "dlq", "maint"]))
    if kind == "keys":
        action = draw(st.sampled_from(["create", "list", "revoke"]))
        if action == "create":
            return ["keys", "create", *org, "--actor", draw(text), "--label", draw(text)]
        return ["keys", "list", *org] if action == "list" else ["keys", "revoke", draw(text)]
    if kind == "approvals":
        if draw(st.booleans()):
            return ["approvals", "inbox", draw(text), *org]
        decision = draw(st.sampled_from(["approve", "reject", "abstain", "maybe"]))
        return ["approvals", "decide", draw(text), decision, "--actor", draw(text),
                "--version", draw(numbers), *org]  # fmt: skip
    if kind == "documents":
        act = draw(st.sampled_from(["pause", "resume", "restart"]))
        return ["documents", act, draw(text), "--actor", draw(text), *org]
    if kind == "schedules":
        return ["schedules", "delete", draw(text), *org] if draw(st.booleans()) else [
            "schedules", "list", *org]  # fmt: skip
    if kind == "dlq":
        action = draw(st.sampled_from(["list", "show", "retry", "drop"]))
        if action == "list":
            run = ["--run", draw(text)] if draw(st.booleans()) else []
            return ["dlq", "list", "--limit", draw(numbers), *run, *org]
        ids = draw(st.lists(numbers, min_size=1, max_size=3))
        return ["dlq", action, *(ids[:1] if action == "show" else ids), *org]
    if draw(st.booleans()):
        day = st.sampled_from(["2025-13-01", "2999-01-01", "0001-01-01", "2025-1-1", "", "-1"])
        return ["maintenance", "--archive-before", draw(st.one_of(day, cli_text))]
    return ["maintenance", "--retention-days", draw(numbers)]


@settings_for(40)
@given(argv=commands())
def test_the_operators_commands_answer_hostile_arguments_with_a_code(acme, db_url, argv):
    run_main(["--database-url", db_url, *argv], db_url=db_url)


@settings_for(20)
@given(text=hostile_text)
def test_a_key_for_a_hostile_actor_is_refused_with_a_code(acme, db_url, text):
    outcome = run_main(["--database-url", db_url, "keys", "create", "--org", "acme", "--actor",
                        text], db_url=db_url)  # fmt: skip
    assert outcome.code in (1, 2) or text in ("u-1", "u-2"), outcome
