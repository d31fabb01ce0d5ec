"""In-app notifications over HTTP (/api/notifications, on the charter_app role) and on the
dashboard (the signed-in user's), and escalations that notify in the app as well as by
email: with no worker able to send email, the email is a dead letter at once and the
escalation still reaches the manager."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from charter.api import create_app
from tests import runtime_definitions as defs
from tests.workers import running_worker


@pytest.fixture
def api(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _notify(client: Any, to: str, code: str) -> None:
    """A memo whose workflow tells ``to`` in the app; returns once it has."""
    contract = defs.contract("memo", {"code": "string"})
    nodes = [("tell", "notification", {"channel": "in_app", "to": to,
                                       "subject": "Memo {entity.code}",
                                       "body": "Memo {entity.code} is open."})]  # fmt: skip
    client.definitions.publish(contract)
    client.definitions.publish(contract, defs.org_definition("memo", nodes, []))
    doc = client.documents.create("memo", {"code": code}, actor="sales")
    client.documents.transition(doc.id, "open", actor="sales")
    assert client.documents.wait(doc.id, timeout=30).state == "done"


def test_the_api_lists_the_key_users_notifications_and_marks_them_read(api, keys, acme, engine):
    _notify(acme, "clerk", "N1")
    clerk, clerk2 = _as(keys["clerk"]), _as(keys["clerk2"])
    listed = api.get("/api/notifications", headers=clerk)
    assert listed.status_code == 200
    [note] = listed.json()
    assert note["subject"] == "Memo N1" and note["user"] == "clerk" and note["read_at"] is None
    assert api.get("/api/notifications", headers=clerk2).json() == []  # only the key's user's
    assert api.get("/api/notifications", headers=_as(keys["globex"])).json() == []
    # Another user's notification is not theirs to mark: 404, and it stays unread.
    theirs = api.post(f"/api/notifications/{note['id']}/read", headers=clerk2)
    assert theirs.status_code == 404 and theirs.json()["error"]["code"] == "NOTIFICATION_NOT_FOUND"
    for bad in ("x", "9" * 30):
        assert api.post(f"/api/notifications/{bad}/read", headers=clerk).status_code == 404
    assert api.get("/api/notifications?unread=true", headers=clerk).json() != []
    read = api.post(f"/api/notifications/{note['id']}/read", headers=clerk)
    assert read.status_code == 200 and read.json() == {"id": note["id"], "read": True}
    assert api.get("/api/notifications?unread=true", headers=clerk).json() == []
    [after] = api.get("/api/notifications", headers=clerk).json()
    assert after["read_at"] is not None
    bad_flag = api.get("/api/notifications?unread=maybe", headers=clerk)
    assert bad_flag.status_code == 422 and "unread" in bad_flag.json()["error"]["message"]
    assert api.post("/api/notifications/read", headers=clerk, json={}).json() == {"read": []}
    paths = api.get("/openapi.json").json()["paths"]
    assert "get" in paths["/api/notifications"]
    assert "post" in paths["/api/notifications/{notification_id}/read"]
    assert "post" in paths["/api/notifications/read"]


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def test_the_dashboard_shows_the_signed_in_users_notifications(api, keys, acme, engine):
    _notify(acme, "clerk", "<b>bold</b>")
    assert api.get("/notifications").status_code == 303  # signed out: to the sign-in page
    token = _csrf(api.get("/sign-in").text)
    signed = api.post("/sign-in", data={"key": keys["clerk"], "csrf": token, "next": "/"})
    assert signed.status_code == 303
    page = api.get("/notifications")
    assert page.status_code == 200
    assert '<a href="/notifications">' in page.text and 'name="viewport"' in page.text
    # Escaped, never markup from the document.
    assert "Memo &lt;b&gt;bold&lt;/b&gt;" in page.text and "<b>bold</b>" not in page.text
    [row] = re.findall(r'<tr data-notification="(\d+)" class="unread">', page.text)
    forged = api.post("/notifications", data={"action": "read", "id": row})
    assert forged.status_code == 403  # no CSRF token
    marked = api.post(
        "/notifications", data={"action": "read", "id": row, "csrf": _csrf(page.text)}
    )
    assert marked.status_code == 303 and marked.headers["location"] == "/notifications"
    page = api.get("/notifications").text
    assert f'<tr data-notification="{row}" class="read">' in page and 'id="read-all"' not in page
    assert acme.notifications.list("clerk", unread_only=True) == []


def test_an_escalation_notifies_in_the_app_when_no_worker_can_send_email(
    acme, db_url, monkeypatch, sql
):
    monkeypatch.delenv("CHARTER_SMTP_URL", raising=False)
    contract = defs.contract("trip", {"cost": "number"})
    org = defs.org_definition(
        "trip",
        [("ok", "approval", {"mode": "inline", "approvers": [{"managerOf": "requester"}],
                             "escalateAfter": "PT1S"})],
        [],
    )  # fmt: skip
    acme.definitions.publish(contract)
    acme.definitions.publish(contract, org)
    acme.directory.put_user("boss2", roles=[], email="boss2@example.com")
    acme.directory.put_user("lead", roles=[], manager="boss2")
    acme.directory.put_user("dev", roles=[], manager="lead")
    with running_worker(db_url, poll_interval=0.05):
        doc = acme.documents.create("trip", {"cost": 900}, actor="dev")
        acme.documents.transition(doc.id, "open", actor="dev")
        deadline = time.monotonic() + 30
        while not (told := acme.notifications.list("boss2")):
            assert time.monotonic() < deadline, "the escalation never reached boss2 in the app"
            time.sleep(0.05)
        waiting = acme.documents.wait(doc.id, timeout=30)  # never held up by the email
    [note] = told
    assert note.subject == f"Approval escalated: trip {doc.id}" and note.run_id
    [request] = acme.approvals.inbox("boss2")
    assert request.document_id == doc.id and request.escalated_at is not None
    assert [w.kind for w in waiting.workflow.waiting_for] == ["approval"]
    effects = sql(
        "SELECT request->>'channel', status, error FROM charter.side_effects "
        "WHERE node_id LIKE %s ORDER BY 1",
        "%#escalation",
    )
    assert [(channel, status) for channel, status, _ in effects] == [
        ("email", "dead_letter"),
        ("in_app", "completed"),
    ]
    assert effects[0][2].startswith("CHANNEL_NOT_CONFIGURED:")
    assert acme.health.report().side_effects["channelNotConfigured"] == 1
