"""The approver's view over HTTP (no browser): a request titled by its contract's display,
its summary fields and field table against the last approved version (changed rows marked,
raw JSON behind "details"), deciding with a comment that is kept, the decided and closed
requests a page at a time, and the same data from the JSON API."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from charter import Client
from charter.api import create_app
from tests.api.test_dashboard import _csrf, _sign_in

INVOICE = {"invoice_no": "A-17", "vendor": "Acme Ltd", "grand_total": 9000,
           "vendor_id": "v-1", "cost_center": "CC-7"}  # fmt: skip


@pytest.fixture
def site(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _until(found: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + 20
    while not (value := found()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return value


def _submitted(acme: Client, data: dict[str, Any], approver: str = "clerk2") -> Any:
    doc = acme.documents.create("ap_invoice", data, actor="clerk")
    acme.documents.transition(doc.id, "submit", actor="clerk")
    return doc, _until(
        lambda: [r for r in acme.approvals.inbox(approver) if r.document_id == doc.id]
    )[0]


def _rows(page: str) -> dict[str, tuple[str, str, bool]]:
    """The field table: field -> (last approved, to approve, marked changed)."""
    rows = {}
    for attrs, cells in re.findall(r'<tr([^>]*data-field="[^"]+"[^>]*)>(.*?)</tr>', page, re.S):
        field = re.search(r'data-field="([^"]+)"', attrs).group(1)
        values = [html.unescape(v) for v in re.findall(r"<td>(.*?)</td>", cells, re.S)]
        rows[field] = (values[0], values[1], 'class="changed"' in attrs)
    return rows


def test_a_request_shows_the_title_summary_and_what_changed(site, keys, acme, engine):
    doc, first = _submitted(acme, INVOICE)
    _sign_in(site, keys["clerk2"])
    inbox = site.get("/inbox").text
    card = inbox.split(f'data-request="{first.id}"', 1)[1].split("</section>", 1)[0]
    assert "Invoice A-17 — Acme Ltd" in card and doc.id not in card.split("href", 1)[0]
    assert (
        "<dt>grand total</dt><dd>9000</dd>" in card and "<dt>cost center</dt><dd>CC-7</dd>" in card
    )
    assert "<details" in card and "0 changed of" in card  # the table folded away on the list

    # The request's page: decide with a comment; the comment is kept with the decision.
    page = site.get(f"/inbox/{first.id}").text
    assert "<h1>Invoice A-17 — Acme Ltd</h1>" in page
    assert '<details class="raw">' in page and "&#34;vendor_id&#34;: &#34;v-1&#34;" in page
    assert "the first version (none was approved yet)" in page
    answer = site.post(f"/inbox/{first.id}/decision", data={
        "csrf": _csrf(page), "version": str(first.entity_version), "decision": "rejected",
        "comment": "  The vendor is Acme Corp, not Acme Ltd.\nPlease fix.  "})  # fmt: skip
    assert answer.status_code == 303
    [decision] = acme.approvals.get(first.id).decisions
    assert decision.comment == "The vendor is Acme Corp, not Acme Ltd.\nPlease fix."
    assert acme.documents.wait(doc.id, timeout=20).state == "draft"

    # Fixed and submitted again: nothing was approved, so against the first version.
    acme.documents.update(doc.id, {"vendor": "Acme Corp", "grand_total": 9100}, actor="clerk")
    acme.documents.transition(doc.id, "submit", actor="clerk")
    again = _until(lambda: acme.approvals.inbox("clerk2"))[0]
    page = site.get(f"/inbox/{again.id}").text
    assert "<h1>Invoice A-17 — Acme Corp</h1>" in page
    rows = _rows(page)
    assert rows["vendor"] == ("Acme Ltd", "Acme Corp", True)
    assert rows["grand_total"] == ("9000", "9100", True)
    assert rows["invoice_no"] == ("A-17", "A-17", False)
    assert list(rows)[:4] == ["invoice_no", "vendor", "grand_total", "cost_center"]  # summary first
    # The decided list shows the rejection with its comment, by title.
    closed = site.get("/inbox").text.split('id="closed"', 1)[1]
    assert "Invoice A-17 — Acme Ltd" in closed and "rejected" in closed
    assert "The vendor is Acme Corp" in closed


def test_an_amendment_is_compared_with_what_was_approved(site, keys, acme, engine):
    doc, first = _submitted(acme, INVOICE)
    acme.approvals.decide(first.id, "approved", actor="clerk2", entity_version=first.entity_version,
                          comment="fine")  # fmt: skip
    assert acme.documents.wait(doc.id, timeout=20).state == "active"
    amended = acme.documents.amend(doc.id, {"grand_total": 9900}, actor="clerk")
    acme.documents.transition(amended.id, "submit", actor="clerk")
    request = _until(lambda: acme.approvals.inbox("clerk2"))[0]
    assert request.document_id == amended.id and request.title == "Invoice A-17 — Acme Ltd"
    review = acme.approvals.review(request.id)
    assert review.baseline_approved and review.baseline_document_id == doc.id
    assert review.baseline_version == first.entity_version
    # The amount, and what posting wrote after the approval.
    changed = {c.field: (c.last_approved, c.to_approve) for c in review.changed}
    assert changed.pop("grand_total") == (9000, 9900)
    assert sorted(changed) == ["gl_batch", "posted_at"] and changed["gl_batch"] == (None, "GL-AUTO")
    _sign_in(site, keys["clerk2"])
    page = site.get(f"/inbox/{request.id}").text
    assert f"last approved (v{first.entity_version} of the amended document)" in page
    assert _rows(page)["grand_total"] == ("9000", "9900", True)


def test_the_api_gives_other_frontends_the_same_view(site, keys, acme, engine):
    _, request = _submitted(acme, {**INVOICE, "vendor": None})
    auth = {"Authorization": f"Bearer {keys['clerk2']}"}
    [listed] = site.get("/api/approvals/inbox", headers=auth).json()
    assert listed["title"] == "Invoice A-17 — —"  # a missing value
    review = site.get(f"/api/approvals/{request.id}/review", headers=auth).json()
    assert review["title"] == "Invoice A-17 — —"
    assert review["summary"][:2] == [{"field": "invoice_no", "value": "A-17"},
                                     {"field": "vendor", "value": None}]  # fmt: skip
    assert {"field": "grand_total", "last_approved": 9000, "to_approve": 9000,
            "changed": False} in review["fields"]  # fmt: skip
    assert review["baseline_approved"] is False and review["data"]["vendor_id"] == "v-1"
    assert site.get("/api/approvals/decided", headers=auth).json() == []
    answer = site.post(f"/api/approvals/{request.id}/decision", headers=auth,
                       json={"decision": "approved", "version": request.entity_version,
                             "comment": "ok"})  # fmt: skip
    assert answer.status_code == 200
    [decided] = site.get("/api/approvals/decided", headers=auth).json()
    assert decided["mine"]["comment"] == "ok" and decided["title"] == "Invoice A-17 — —"
    bad = site.get("/api/approvals/decided?limit=0", headers=auth)
    assert bad.status_code == 422 and "limit" in bad.text


def test_decided_and_closed_requests_come_a_page_at_a_time(site, keys, acme, engine, sql):
    made = []
    for n in range(23):
        doc = acme.documents.create("ap_invoice", {**INVOICE, "invoice_no": f"P-{n:02}"},
                                    actor="clerk")  # fmt: skip
        acme.documents.transition(doc.id, "submit", actor="clerk")
        made.append(doc.id)
    _until(lambda: len(acme.approvals.inbox("clerk2")) == 23)
    for request in acme.approvals.inbox("clerk2"):
        acme.approvals.decide(request.id, "rejected", actor="clerk2",
                              entity_version=request.entity_version, comment="no")  # fmt: skip
    _sign_in(site, keys["clerk2"])
    first = site.get("/inbox").text
    assert (
        first.count("<tr data-request=") == 20
        and 'rel="next"' in first
        and 'rel="prev"' not in first
    )
    second = site.get("/inbox?page=2").text
    assert (
        second.count("<tr data-request=") == 3
        and 'rel="prev"' in second
        and 'rel="next"' not in second
    )
    shown = set(re.findall(r"Invoice (P-\d\d)", first + second))
    assert shown == {f"P-{n:02}" for n in range(23)}
    assert site.get("/inbox?page=x").text.count("<tr data-request=") == 20  # a hand-typed page
    assert "Nothing on this page." in site.get("/inbox?page=9").text
