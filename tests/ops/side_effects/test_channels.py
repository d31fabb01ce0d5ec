"""Notifications delivered through real local servers: email to an SMTP server (aiosmtpd),
SMS to a provider with Twilio's API shape, in-app rows per user — and each channel's failure
modes: temporary refusals retried with the same key, permanent ones dead-lettered into the
node's `failed` edge, refused connections and timeouts retried."""

from __future__ import annotations

import time
from typing import Any

import pytest

from charter.errors import NotificationNotFoundError
from tests import runtime_definitions as defs
from tests.workers import running_worker


def _publish(client: Any, channel: str, to: str, *, failed_edge: bool = True) -> None:
    contract = defs.contract("memo", {"code": "string"})
    nodes = [
        ("tell", "notification", {"channel": channel, "to": to, "subject": "Memo {entity.code}",
                                  "body": "Memo {entity.code} is open."}),
        ("told", "script", {"expression": "true", "assignTo": "context.told"}),
    ]  # fmt: skip
    edges = [("tell", "told", {})]
    if failed_edge:
        nodes.append(("fallback", "script", {"expression": "true", "assignTo": "context.fallback"}))
        edges.append(("tell", "fallback", {"label": "failed"}))
    client.definitions.publish(contract)
    client.definitions.publish(contract, defs.org_definition("memo", nodes, edges))


def _open(client: Any, code: str) -> Any:
    doc = client.documents.create("memo", {"code": code}, actor="sales")
    client.documents.transition(doc.id, "open", actor="sales")
    return doc


def _settled(client: Any, doc_id: str, timeout: float = 30) -> Any:
    """The document once its workflow finished (deliveries retry with backoff meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        doc = client.documents.wait(doc_id, timeout=timeout)
        if doc.workflow.status != "running" or doc.state == "done":
            return doc
        assert time.monotonic() < deadline, f"still waiting: {doc.workflow.waiting_for}"
        time.sleep(0.1)


def _effect(sql: Any, run_id: str) -> tuple[Any, ...]:
    [row] = sql(
        "SELECT status, attempts, error, response, idempotency_key FROM charter.side_effects"
        " WHERE run_id = %s",
        run_id,
    )
    return row


# -- email -----------------------------------------------------------------------------


def test_an_email_goes_to_every_holder_of_the_role_rendered(acme, engine, mail, sql):
    acme.directory.put_user("wh2", roles=["warehouse"], email="wh2@example.com")
    _publish(acme, "email", "role:warehouse")
    done = _settled(acme, _open(acme, "M1").id)
    assert done.state == "done" and done.workflow.context["told"] is True
    sent = sorted(mail.messages, key=lambda m: m["to"])
    assert [m["to"] for m in sent] == [["wh2@example.com"], ["wh@example.com"]]
    assert {m["subject"] for m in sent} == {"Memo M1"}
    assert {m["body"] for m in sent} == {"Memo M1 is open."}
    assert {m["from"] for m in sent} == {"charter@example.com"}
    status, attempts, _, response, key = _effect(sql, done.workflow.run_id)
    assert (status, attempts) == ("completed", 1)
    assert sorted(response["delivered"]) == ["wh2@example.com", "wh@example.com"]
    # Each message carries the effect's key (one per recipient), for dedup downstream.
    assert sorted(m["key"] for m in sent) == [f"{key}.0", f"{key}.1"]


def test_a_temporary_smtp_refusal_is_retried_and_reached_recipients_are_not_sent_twice(
    acme, engine, mail, sql
):
    acme.directory.put_user("wh2", roles=["warehouse"], email="wh2@example.com")
    # Recipients in user-id order: wh first (accepted), then wh2 (refused once, then fine).
    mail.script["wh2@example.com"] = ["451 4.3.0 mailbox busy, try later", "250 OK"]
    _publish(acme, "email", "role:warehouse")
    done = _settled(acme, _open(acme, "M2").id)
    assert done.workflow.context.get("told") is True
    assert len(mail.to("wh@example.com")) == 1  # not sent again on the second attempt
    assert len(mail.to("wh2@example.com")) == 1
    status, attempts, _, _, _ = _effect(sql, done.workflow.run_id)
    assert (status, attempts) == ("completed", 2)


def test_a_permanent_smtp_rejection_is_dead_lettered_into_the_failed_edge(acme, engine, mail, sql):
    mail.script["wh@example.com"] = ["550 5.1.1 no such mailbox"]
    _publish(acme, "email", "wh")
    done = _settled(acme, _open(acme, "M3").id)
    assert done.workflow.context.get("fallback") is True and "told" not in done.workflow.context
    status, attempts, error, _, _ = _effect(sql, done.workflow.run_id)
    assert (status, attempts) == ("dead_letter", 1)
    assert "550" in error and "no such mailbox" in error
    assert mail.messages == []


def test_a_refused_smtp_connection_is_retried(acme, db_url, monkeypatch, sql):
    monkeypatch.setenv("CHARTER_SMTP_URL", "smtp://127.0.0.1:9?starttls=off&timeout=1")
    _publish(acme, "email", "wh")
    with running_worker(db_url, poll_interval=0.05):
        doc = _open(acme, "M4")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = sql("SELECT status, attempts, error FROM charter.side_effects")
            if rows and rows[0][0] == "failed" and rows[0][1] >= 2:
                break
            time.sleep(0.1)
    [(status, attempts, error)] = sql("SELECT status, attempts, error FROM charter.side_effects")
    assert status == "failed" and attempts >= 2  # waiting to try again, not dead
    assert "127.0.0.1:9" in error
    assert acme.documents.get(doc.id).workflow.status == "running"


def test_an_smtp_server_that_does_not_answer_in_time_is_retried(acme, db_url, mail, monkeypatch):
    monkeypatch.setenv("CHARTER_SMTP_URL", mail.url + "&timeout=0.5")
    mail.data_delays.append(2.0)  # the first message's DATA is answered too late
    _publish(acme, "email", "wh")
    with running_worker(db_url, poll_interval=0.05):
        done = _settled(acme, _open(acme, "M6").id)
    assert done.workflow.context.get("told") is True
    keys = {m["key"] for m in mail.to("wh@example.com")}
    assert len(keys) == 1  # however many arrived, they carry one key


def test_email_no_running_worker_can_send_is_a_dead_letter_at_once(acme, db_url, monkeypatch, sql):
    monkeypatch.delenv("CHARTER_SMTP_URL", raising=False)
    _publish(acme, "email", "wh")
    with running_worker(db_url, poll_interval=0.05):
        done = _settled(acme, _open(acme, "M5").id)
        assert done.state == "done" and done.workflow.context.get("fallback") is True
        status, attempts, error, _, _ = _effect(sql, done.workflow.run_id)
    assert (status, attempts) == ("dead_letter", 1)
    assert error.startswith("CHANNEL_NOT_CONFIGURED:") and "CHARTER_SMTP_URL" in error
    [letter] = acme.dead_letters.list()
    assert letter.error == error
    assert acme.health.report().side_effects["channelNotConfigured"] == 1


def test_without_a_failed_edge_it_fails_the_instance_as_channel_not_configured(
    acme, db_url, monkeypatch
):
    monkeypatch.delenv("CHARTER_SMTP_URL", raising=False)
    _publish(acme, "email", "wh", failed_edge=False)
    with running_worker(db_url, poll_interval=0.05):
        failed = acme.documents.wait(_open(acme, "M6").id, timeout=30).workflow
    assert failed.status == "failed" and failed.error["code"] == "CHANNEL_NOT_CONFIGURED"
    assert [w.kind for w in failed.waiting_for] == ["fix"]


def test_email_waits_while_a_running_worker_can_send_it(acme, db_url, monkeypatch, sql):
    monkeypatch.delenv("CHARTER_SMTP_URL", raising=False)
    _publish(acme, "email", "wh")
    # Another worker, alive, that has CHARTER_SMTP_URL: the email is its to send.
    sql(
        "INSERT INTO charter.workers (id, hostname, pid, flows, concurrency, channels) "
        "VALUES ('mailer', 'elsewhere', 1, '{}', 1, '{webhook,notification:email}')"
    )
    with running_worker(db_url, poll_interval=0.05) as worker:
        doc = _open(acme, "M7")
        deadline = time.monotonic() + 20
        while not sql("SELECT 1 FROM charter.side_effects"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        sweeps = worker.documents.deliveries.unsendable_sweeps
        while worker.documents.deliveries.unsendable_sweeps < sweeps + 2:  # looked, twice
            assert time.monotonic() < deadline
            time.sleep(0.05)
        [(status, attempts)] = sql("SELECT status, attempts FROM charter.side_effects")
        assert (status, attempts) == ("pending", 0)  # nobody here claimed what it cannot send
        sql("UPDATE charter.workers SET stopped_at = now() WHERE id = 'mailer'")
        done = _settled(acme, doc.id)
    assert done.workflow.context.get("fallback") is True
    assert _effect(sql, done.workflow.run_id)[0] == "dead_letter"


# -- SMS -------------------------------------------------------------------------------


def test_an_sms_goes_to_the_users_phone_through_the_provider(acme, engine, sms, sql):
    acme.directory.put_user("driver", roles=["driver"], phone="+15550002222")
    _publish(acme, "sms", "driver")
    done = _settled(acme, _open(acme, "S1").id)
    assert done.workflow.context.get("told") is True
    [message] = sms.to("+15550002222")
    assert message["path"] == "/2010-04-01/Accounts/AC123/Messages.json"
    assert message["form"] == {"To": "+15550002222", "From": "+15550001111",
                               "Body": "Memo S1 is open."}  # fmt: skip
    assert message["auth"].startswith("Basic ")
    status, _, _, response, key = _effect(sql, done.workflow.run_id)
    assert status == "completed" and message["key"] == f"{key}.0"
    assert response["delivered"] == ["+15550002222"]


@pytest.mark.parametrize(
    ("answers", "delivered", "sends"),
    [
        ([(500, {}, 0.0), (201, {}, 0.0)], True, 2),  # a 5xx is retried
        ([(429, {"Retry-After": "1"}, 0.0), (201, {}, 0.0)], True, 2),  # after Retry-After
        ([(400, {}, 0.0)], False, 1),  # a 4xx is final: the failed edge
        ([(201, {}, 3.0), (201, {}, 0.0)], True, 2),  # a timeout (1 s) is retried
    ],
    ids=["500", "429", "400", "timeout"],
)
def test_sms_failure_modes(acme, engine, sms, sql, answers, delivered, sends):
    acme.directory.put_user("driver", roles=["driver"], phone="+15550003333")
    sms.script["+15550003333"] = list(answers)
    _publish(acme, "sms", "driver")
    done = _settled(acme, _open(acme, "S2").id)
    assert done.workflow.context.get("told" if delivered else "fallback") is True
    attempts = sms.to("+15550003333")
    assert len(attempts) == sends
    assert len({a["key"] for a in attempts}) == 1  # one idempotency key on every attempt
    if answers[0][0] == 429:
        status, *_ = _effect(sql, done.workflow.run_id)
        assert status == "completed"


def test_a_refused_sms_connection_is_retried(acme, db_url, monkeypatch, sql):
    monkeypatch.setenv("CHARTER_SMS_URL", "http://AC1:t@127.0.0.1:9?from=%2B15550001111")
    acme.directory.put_user("driver", roles=["driver"], phone="+15550004444")
    _publish(acme, "sms", "driver")
    with running_worker(db_url, poll_interval=0.05):
        _open(acme, "S3")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = sql("SELECT status, attempts, error FROM charter.side_effects")
            if rows and rows[0][0] == "failed" and rows[0][1] >= 2:
                break
            time.sleep(0.1)
    [(status, attempts, error)] = sql("SELECT status, attempts, error FROM charter.side_effects")
    assert status == "failed" and attempts >= 2 and "127.0.0.1" in error


# -- in-app ----------------------------------------------------------------------------


def test_in_app_notifications_land_per_user_and_can_be_marked_read(acme, engine, sql):
    acme.directory.put_user("wh2", roles=["warehouse"], email="wh2@example.com")
    _publish(acme, "in_app", "role:warehouse")
    done = _settled(acme, _open(acme, "N1").id)
    assert done.workflow.context.get("told") is True
    [note] = acme.notifications.list("wh")
    assert (note.subject, note.body, note.read) == ("Memo N1", "Memo N1 is open.", False)
    assert note.run_id == done.workflow.run_id
    assert len(acme.notifications.list("wh2", unread_only=True)) == 1
    with pytest.raises(NotificationNotFoundError):
        acme.notifications.mark_read("wh2", [note.id])  # wh's notification, not wh2's
    assert acme.notifications.list("wh")[0].read is False  # nothing was marked
    assert acme.notifications.mark_read("wh", [note.id]) == [note.id]
    assert acme.notifications.mark_read("wh", [note.id]) == []  # already read
    assert acme.notifications.list("wh", unread_only=True) == []
    assert acme.notifications.mark_read("wh2") != []  # all of wh2's
    assert acme.notifications.list("nobody") == []


def test_an_in_app_notification_to_a_role_nobody_has_is_dead_lettered(acme, engine, sql):
    _publish(acme, "in_app", "role:astronaut")
    done = _settled(acme, _open(acme, "N2").id)
    assert done.workflow.context.get("fallback") is True
    status, _, error, _, _ = _effect(sql, done.workflow.run_id)
    assert status == "dead_letter" and "role:astronaut" in error
