"""The dashboard's pages as people read them (no browser): documents listed by title with
filters and search, a document's lifecycle drawn and its workflow's wait in words, a history
with reasons, comments, labels and who acted for whom, runs named by their document, a
failure summed up with its traceback preformatted, and the bell's unread count."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from charter import Flow
from charter.api import create_app
from charter.api.dashboard.words import when
from tests.api.test_browser import _until
from tests.api.test_dashboard import _csrf, _sign_in


@pytest.fixture
def site(db_url, login) -> Iterator[TestClient]:
    with TestClient(create_app(login("charter_app")), follow_redirects=False) as client:
        yield client


def _listed(page: str) -> list[str]:
    """The ids of the documents a list page shows, in order."""
    return re.findall(r'<tr data-document="([^"]+)">', page)


def _row(page: str, table: str, attribute: str, value: str) -> str:
    body = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    match = re.search(rf'<tr {attribute}="{re.escape(value)}"[^>]*>.*?</tr>', body, re.DOTALL)
    assert match, body
    return match.group(0)


def test_documents_are_listed_by_title_filtered_by_state_and_type_and_searched(site, keys, acme):
    first = acme.documents.create("ap_invoice", {"grand_total": 10, "vendor_id": "v"},
                                  actor="clerk")  # fmt: skip
    titled = {"grand_total": 20, "invoice_no": "INV-7", "vendor": "Paper & Co"}
    second = acme.documents.create("ap_invoice", titled, actor="clerk")
    acme.documents.transition(second.id, "submit", actor="clerk")
    order = acme.documents.create("sales_order", {}, actor="sales")
    _sign_in(site, keys["clerk"])
    page = site.get("/documents").text
    assert set(_listed(page)) == {first.id, second.id, order.id}
    # Named by their contract's title; without the fields it names, by type and id.
    assert f">Ap invoice {first.id[:8]}</a>" in page
    assert ">Invoice INV-7 — Paper &amp; Co</a>" in page
    assert "<option>sales_order</option>" in page and "<option>submitted</option>" in page
    assert _listed(site.get("/documents?state=submitted").text) == [second.id]
    assert set(_listed(site.get("/documents?entity_type=ap_invoice").text)) == {
        first.id, second.id}  # fmt: skip
    assert _listed(site.get("/documents", params={"q": "paper & co"}).text) == [second.id]
    assert _listed(site.get(f"/documents?q={first.id[:8].upper()}").text) == [first.id]
    assert _listed(site.get("/documents?q=sales+ord").text) == [order.id]
    assert _listed(site.get("/documents?q=invoice&state=draft").text) == [first.id]
    # LIKE's wildcards are searched for as themselves; what was searched is shown escaped.
    assert _listed(site.get("/documents?q=%25").text) == []
    assert _listed(site.get("/documents?q=INV_7").text) == []
    shown = site.get("/documents", params={"q": '"><script>x</script>'}).text
    assert "<script>x" not in shown and "&#34;&gt;&lt;script&gt;" in shown
    refused = site.get("/documents", params={"q": "a\x00b"})  # no text PostgreSQL takes
    assert refused.status_code == 422 and "ARGUMENT_INVALID" in refused.text, refused.text[:300]


def test_the_list_shows_a_contracts_columns(site, keys, acme):
    doc = acme.documents.create("ap_invoice", {"grand_total": 4321, "invoice_no": "INV-77",
                                               "vendor": "Ink Ltd"}, actor="clerk")  # fmt: skip
    _sign_in(site, keys["clerk"])
    page = site.get("/documents?entity_type=ap_invoice").text
    headers = re.findall(r'<th data-column="(\w+)">', page)
    assert headers == ["invoice_no", "vendor", "grand_total", "cost_center"]  # the contract's
    row = _row(page, "documents", "data-document", doc.id)
    assert "<td>INV-77</td><td>Ink Ltd</td><td>4321</td><td></td>" in row
    assert "data-column=" not in site.get("/documents").text  # no type chosen: no columns


def test_a_document_page_draws_its_lifecycle_and_says_what_its_workflow_waits_for(
    site, keys, acme, engine
):
    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    workflow = acme.documents.wait(doc.id, timeout=20).workflow
    [wait] = workflow.waiting_for
    assert wait.kind == "approval" and wait.since is not None
    _sign_in(site, keys["clerk2"])
    page = site.get(f"/documents/{doc.id}").text
    # The lifecycle: each state once, the current one marked; each transition an arc.
    diagram = page.split('id="lifecycle"', 1)[1].split("</svg>", 1)[0]
    states = re.findall(r'<g class="state( current)?" data-state="(\w+)"', diagram)
    assert states == [("", "draft"), (" current", "submitted"), ("", "active"),
                      ("", "cancelled")]  # fmt: skip
    assert 'data-gate="approve" data-from="submitted" data-to="draft"' in diagram
    assert "approve (reject)" in diagram and "approve (approved)" in diagram
    # The wait in words: the approvers the request resolved to, since when.
    assert (f"waiting for approval by clerk2 or reviewer since {when(wait.since)}"
            in html.unescape(page))  # fmt: skip


def test_the_history_shows_reasons_comments_labels_and_who_acted_for_whom(site, keys, acme, engine):
    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    [request] = _until(lambda: acme.approvals.inbox("reviewer"))
    version = request.entity_version
    acme.approvals.decide(request.id, "rejected", actor="reviewer", entity_version=version,
                          comment="wrong vendor")  # fmt: skip
    _until(lambda: acme.documents.get(doc.id).state == "draft")
    acme.documents.transition(doc.id, "submit", actor="clerk", reason="vendor fixed")
    [request] = _until(lambda: acme.approvals.inbox("clerk2"))
    acme.approvals.decide(request.id, "approved", actor="clerk2",
                          entity_version=request.entity_version, comment="fine now")  # fmt: skip
    _until(lambda: acme.documents.wait(doc.id, timeout=20).workflow.status == "completed")
    _sign_in(site, keys["clerk"])
    page = site.get(f"/documents/{doc.id}").text
    rejected = html.unescape(_row(page, "history", "data-version", "3"))
    assert '<b class="label">reject</b>' in rejected and "submitted → draft" in rejected
    assert "the workflow, on the decision of reviewer" in rejected
    assert 'reviewer rejected: <q class="comment">wrong vendor</q>' in rejected
    resubmitted = html.unescape(_row(page, "history", "data-version", "4"))
    assert "vendor fixed" in resubmitted and '<td class="acted-by">clerk</td>' in resubmitted
    approved = html.unescape(_row(page, "history", "data-version", "5"))
    assert '<b class="label">approved</b>' in approved and "fine now" in approved
    assert "on the decision of clerk2" in approved and "reviewer" not in approved
    # The posting action: the workflow acted, as the system (its node's runAs).
    [posted] = [e for e in acme.documents.history(doc.id) if e.action == "ap_invoice.post"]
    row = html.unescape(_row(page, "history", "data-version", str(posted.version)))
    assert '<td class="acted-by">the workflow, as system</td>' in row


def test_runs_of_a_document_are_named_by_its_title(site, keys, acme, engine):
    data = {"grand_total": 9000, "vendor_id": "v-1", "invoice_no": "INV-9", "vendor": "Steel AG"}
    doc = acme.documents.create("ap_invoice", data, actor="clerk")
    acme.documents.transition(doc.id, "submit", actor="clerk")
    run_id = acme.documents.wait(doc.id, timeout=20).workflow.run_id
    _sign_in(site, keys["clerk"])
    listed = _row(site.get("/runs").text, "runs", "data-run", run_id)
    assert ">Invoice INV-9 — Steel AG</a>" in listed
    page = site.get(f"/runs/{run_id}").text
    assert '<h1 id="run-title">Invoice INV-9 — Steel AG</h1>' in page
    assert f'href="/documents/{doc.id}"' in page
    # It opens at the node it waits at: the approval.
    assert 'id="graph-focus" data-node="usr:slot:review:review"' in page


def test_a_failed_run_is_summed_up_and_its_traceback_is_preformatted(site, keys, acme, db_url):
    from tests.workers import running_worker

    flow = Flow("dash_fails")

    @flow.step(max_attempts=1)
    def check(run: dict[str, Any]) -> None:
        raise ValueError("the total <is> negative" + chr(10) + "second line of the message")

    with running_worker(db_url, flow):
        run_id = acme.start(flow, {})
        _until(lambda: acme.get_run(run_id).status == "failed")
    _sign_in(site, keys["clerk"])
    page = site.get(f"/runs/{run_id}").text
    summary = page.split('id="failure"', 1)[1].split("</div>", 1)[0]
    assert "ValueError: the total &lt;is&gt; negative" in summary
    assert "second line" not in summary and 'href="#graph-focus"' in summary
    assert 'id="graph-focus" data-node="check" data-status="failed"' in page
    trace = re.search(r'<pre class="traceback">(.*?)</pre>', page, re.DOTALL)
    assert trace and "Traceback (most recent call last):\n" in trace.group(1)
    assert "\\n" not in trace.group(1)  # real newlines, not JSON's escapes


def test_the_bell_counts_the_signed_in_users_unread_notifications(site, keys, acme, engine):
    from tests.ops.side_effects.test_notifications import _notify

    _sign_in(site, keys["clerk"])
    assert '<span id="unread-count">0</span>' in site.get("/documents").text
    _notify(acme, "clerk", "N1")
    page = site.get("/documents").text
    assert '<span id="unread-count">1</span>' in page and 'href="/notifications"' in page
    site.post("/notifications", data={"csrf": _csrf(page), "action": "read-all"})
    assert '<span id="unread-count">0</span>' in site.get("/runs").text


def test_a_workflow_action_run_as_its_starter_reads_as_on_their_behalf():
    from charter.api.dashboard.words import acted_by

    row = {"actor": "clerk", "runAs": "actor", "via": "workflow", "decisions": []}
    assert acted_by(row) == "the workflow, on behalf of clerk"
    assert acted_by({**row, "via": "api"}) == "clerk"
    both = [{"actor": "ann"}, {"actor": "bob"}]
    assert acted_by({**row, "decisions": both}) == "the workflow, on the decision of ann and bob"
