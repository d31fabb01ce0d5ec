"""The dashboard over HTTP (no browser): signing in with a key, the session cookie, CSRF on
every form, another org's pages are 404, and the health page shows the report's figures."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from charter.api import create_app


@pytest.fixture
def site(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def _sign_in(site: TestClient, key: str) -> str:
    token = _csrf(site.get("/sign-in").text)
    answer = site.post("/sign-in", data={"key": key, "csrf": token, "next": "/"})
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    return answer.headers["set-cookie"].lower()


def test_pages_need_a_signed_in_key_and_forms_need_their_csrf_token(site, keys):
    for path in ("/", "/runs", "/documents", "/inbox", "/dead-letters"):
        answer = site.get(path)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/sign-in")
    token = _csrf(site.get("/sign-in").text)
    wrong = site.post("/sign-in", data={"key": "chk_x_y", "csrf": token})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
    forged = site.post("/sign-in", data={"key": keys["clerk"], "csrf": "forged"})
    assert forged.status_code == 403
    elsewhere = site.post("/sign-in", data={"key": keys["clerk"], "csrf": token,
                                            "next": "//evil.example/"})  # fmt: skip
    assert elsewhere.headers["location"] == "/"  # never an open redirect
    set_cookie = _sign_in(site, keys["clerk"])
    assert "httponly" in set_cookie and "samesite=strict" in set_cookie
    cookie = site.cookies.get("charter_session")
    assert cookie and keys["clerk"] not in cookie  # the key never leaves the server
    assert site.get("/").status_code == 200
    no_token = site.post("/dead-letters", data={"action": "retry", "id": "1"})
    assert no_token.status_code == 403 and "CSRF" in no_token.text
    signed_out = site.post("/sign-out", data={"csrf": _csrf(site.get("/").text)})
    assert signed_out.status_code == 303
    assert site.get("/").status_code == 303


def test_the_health_page_shows_the_reports_figures(site, keys, acme, engine):
    acme.side_effects.webhook("http://127.0.0.1:9/x", {}, max_attempts=1)
    deadline = time.monotonic() + 20
    while not acme.dead_letters.list():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    _sign_in(site, keys["ops"])
    page = site.get("/").text
    report = acme.health.report()
    shown = dict(re.findall(r'<b id="([\w-]+)">([^<]*)</b>', page))
    assert shown["workers-alive"] == str(report.workers_alive)
    assert shown["instances-running"] == str(report.instances["running"])
    assert shown["dead-letters"] == str(
        report.side_effects["deadLetters"] + report.document_events["deadLetters"]
    )
    assert shown["effects-pending"] == str(report.side_effects["pending"])


def test_another_orgs_run_and_document_are_404(site, keys, acme, engine):
    doc = acme.documents.create("ap_invoice", {"grand_total": 5}, actor="clerk")
    _sign_in(site, keys["globex"])
    assert site.get(f"/documents/{doc.id}").status_code == 404
    assert site.get("/runs/nope").status_code == 404


def test_a_stuck_instance_shows_on_the_health_page_and_can_be_force_failed(
    site, keys, acme, engine, sql
):
    from tests.ops.health.test_health import _waiting_memo

    waiting = _waiting_memo(acme)
    run_id = waiting.workflow.run_id
    sql("DELETE FROM charter.instance_waits WHERE run_id = %s", run_id)
    sql("UPDATE charter.workflow_instances SET updated_at = now() - interval '20 minutes'"
        " WHERE id = %s", run_id)  # fmt: skip
    _sign_in(site, keys["ops"])
    page = site.get("/").text
    assert f'data-run="{run_id}"' in page
    answer = site.post(f"/stuck/{run_id}", data={"action": "force-fail", "reason": "lost",
                                                 "csrf": _csrf(page)})  # fmt: skip
    assert answer.status_code == 303
    failed = acme.documents.get(waiting.id).workflow
    assert failed.status == "failed" and failed.error["code"] == "STUCK_FORCE_FAILED"
    assert f'data-run="{run_id}"' not in site.get("/").text


def test_the_definitions_page_shows_versions_and_the_diff_by_slot(site, keys, acme):
    _sign_in(site, keys["ops"])
    page = site.get("/definitions").text
    assert 'data-entity-type="ap_invoice"' in page and 'data-slot="slot:review"' in page
    assert "current" in page


def test_the_inbox_says_why_a_request_closed(site, keys, acme, engine):
    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    deadline = time.monotonic() + 20
    while not acme.approvals.inbox("clerk2"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    acme.documents.amend(doc.id, {"grand_total": 9500}, actor="clerk", reason="typo")
    while acme.approvals.history(doc.id)[0].status == "pending":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    _sign_in(site, keys["clerk2"])
    page = site.get("/inbox").text
    closed = page.split('id="closed"', 1)[1]
    assert doc.id[:8] in closed and "voided" in closed


def test_a_hand_made_form_gets_a_clear_error_not_a_crash(site, keys):
    _sign_in(site, keys["clerk2"])
    token = _csrf(site.get("/inbox").text)
    answer = site.post("/inbox/nope/decision", data={"csrf": token, "decision": "approved",
                                                     "version": "two"})  # fmt: skip
    assert answer.status_code == 400 and "reload" in answer.text
    answer = site.post("/dead-letters", data={"csrf": token, "action": "retry", "id": "x"})
    assert answer.status_code == 400


def test_a_runs_page_shows_its_children_and_what_a_step_waits_for(site, keys, acme, db_url):
    from charter import Flow
    from tests.workers import running_worker

    child = Flow("dash_child")

    @child.wait_event(key="dash:{run.n}")
    def later(): ...

    parent = Flow("dash_parent")

    @parent.step(child=child)
    def delegate(run: dict[str, int]) -> dict[str, int]:
        return {"n": run["n"]}

    with running_worker(db_url, child, parent):
        run_id = acme.start(parent, {"n": 1})
        deadline = time.monotonic() + 20
        while not acme.get_run(run_id).children and time.monotonic() < deadline:
            time.sleep(0.1)
        [kid] = acme.get_run(run_id).children
        _sign_in(site, keys["clerk"])
        page = site.get(f"/runs/{run_id}").text
        assert f'href="/runs/{kid.run_id}"' in page
        assert "waiting for child run" in page
        child_page = site.get(f"/runs/{kid.run_id}").text
        assert "waiting for event dash:1" in child_page
        assert f'href="/runs/{run_id}"' in child_page


def test_an_admin_pauses_and_resumes_a_documents_workflow_from_its_page(site, keys, acme, engine):
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 9000, "vendor_id": "v"}, actor="clerk"
    )
    acme.documents.transition(doc.id, "submit", actor="clerk")
    acme.documents.wait(doc.id, timeout=20)
    _sign_in(site, keys["clerk"])
    assert 'value="pause"' not in site.get(f"/documents/{doc.id}").text  # not an admin
    site.post("/sign-out", data={"csrf": _csrf(site.get("/").text)})
    _sign_in(site, keys["ops"])
    page = site.get(f"/documents/{doc.id}").text
    assert 'value="pause"' in page and 'value="resume"' not in page
    paused = site.post(
        f"/documents/{doc.id}", data={"csrf": _csrf(page), "action": "pause", "reason": "dispute"}
    )
    assert paused.status_code == 303
    page = site.get(f"/documents/{doc.id}").text
    assert 'value="resume"' in page and "dispute" in page
    assert acme.documents.get(doc.id).workflow.status == "paused"
    site.post(f"/documents/{doc.id}", data={"csrf": _csrf(page), "action": "resume"})
    assert acme.documents.get(doc.id).workflow.status == "running"


def test_text_shown_has_its_bidirectional_controls_made_visible(site, keys, acme):
    # U+202E before "0019" would show as "9100": a reviewer must see what is stored.
    doc = acme.documents.create(
        "ap_invoice", {"grand_total": 10, "vendor_id": "\u202e0019"}, actor="clerk"
    )
    acme.documents.update(doc.id, {"vendor_id": "v-\u2067x\u2069"}, actor="clerk")
    _sign_in(site, keys["clerk"])
    for path in (f"/documents/{doc.id}", "/documents"):
        page = site.get(path)
        assert page.status_code == 200
        assert not re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", page.text), path
    page = site.get(f"/documents/{doc.id}").text
    assert "[U+202E]0019" in page and "v-[U+2067]x[U+2069]" in page
    # The page carries the headers that keep it from being framed or sniffed.
    answer = site.get(f"/documents/{doc.id}")
    assert answer.headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in answer.headers["content-security-policy"]


def _dead_letter_row(page: str, effect_id: int) -> str:
    match = re.search(rf'<tr id="dead-letter-{effect_id}">.*?</tr>', page, re.DOTALL)
    assert match, page
    return match.group(0)


def test_a_dead_letter_and_its_run_link_to_each_other(site, keys, acme, engine):
    from tests.ops.side_effects.test_redrive import _dead_lettered
    from tests.servers import Receiver

    receiver = Receiver()
    try:
        doc, run_id, letter = _dead_lettered(acme, receiver, "L1")
        app = acme.side_effects.webhook("http://127.0.0.1:9/x", {}, max_attempts=1)
        deadline = time.monotonic() + 20
        while len(acme.dead_letters.list()) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        _sign_in(site, keys["ops"])
        page = site.get("/dead-letters").text
        # The workflow's dead letter links to its run; the app's own webhook has no run.
        assert f'href="/runs/{run_id}"' in _dead_letter_row(page, letter.id)
        assert "/runs/" not in _dead_letter_row(page, app.id)
        # The run's page lists its dead letters (its own only), each linking to its row.
        run_page = site.get(f"/runs/{run_id}").text
        listed = run_page.split('id="dead-letters"', 1)[1].split("</table>", 1)[0]
        assert f'href="/dead-letters#dead-letter-{letter.id}"' in listed
        assert f"dead-letter-{app.id}" not in listed
        # Re-driven from the page: the run goes on, and its page has no dead letter left.
        answer = site.post("/dead-letters", data={"csrf": _csrf(page), "action": "retry",
                                                  "id": str(letter.id)})  # fmt: skip
        assert answer.status_code == 303
        while acme.documents.get(doc.id).workflow.status != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        [audit] = [e for e in acme.documents.history(doc.id) if e.action == "instance.redrive"]
        assert audit.actor == "service:ops"
        assert 'id="dead-letters"' not in site.get(f"/runs/{run_id}").text
    finally:
        receiver.close()
