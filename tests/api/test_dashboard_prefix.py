"""The dashboard mounted under a prefix (`Mount("/ops", create_app(...))`): every link, form
action, asset and redirect stays under /ops; and the inbox page costs the same number of
queries whatever the number of requests it shows."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from charter.api import create_app
from charter.db.store import Call

PREFIX = "/ops"
_LINK = re.compile(r'(?:href|action|src)="([^"]*)"')


def _mounted(inner: Starlette) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with inner.router.lifespan_context(inner):  # a Mount does not run it
            yield

    return Starlette(routes=[Mount(PREFIX, app=inner)], lifespan=lifespan)


@pytest.fixture
def ops_site(db_url, login) -> Iterator[tuple[TestClient, Starlette]]:
    inner = create_app(login("charter_app"))
    with TestClient(_mounted(inner), follow_redirects=False) as client:
        yield client, inner


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def _under_prefix(page: str, where: str) -> list[str]:
    links = _LINK.findall(page)
    outside = [link for link in links if not link.startswith((f"{PREFIX}/", "#"))]
    assert outside == [], (where, outside)
    return links


def _sign_in(site: TestClient, key: str, next_path: str | None = None) -> str:
    page = site.get(f"{PREFIX}/sign-in").text
    _under_prefix(page, "sign-in")
    form = {"key": key, "csrf": _csrf(page)}
    if next_path is not None:
        form["next"] = next_path
    answer = site.post(f"{PREFIX}/sign-in", data=form)
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def _waiting_request(acme: Any) -> Any:
    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    deadline = time.monotonic() + 20
    while not [r for r in acme.approvals.inbox("clerk2") if r.document_id == doc.id]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return acme.documents.get(doc.id)


def test_every_page_link_form_and_redirect_stays_under_the_prefix(ops_site, keys, acme, engine):
    site, _ = ops_site
    doc = _waiting_request(acme)
    paused = _waiting_request(acme)  # an instance to pause and resume
    acme.side_effects.webhook("http://127.0.0.1:9/x", {}, max_attempts=1)
    deadline = time.monotonic() + 20
    while not acme.dead_letters.list():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # Signed out: to the sign-in page under the prefix, coming back to the page asked for.
    answer = site.get(f"{PREFIX}/runs")
    assert answer.status_code == 303
    assert answer.headers["location"] == f"{PREFIX}/sign-in?next={PREFIX}/runs"
    assert _sign_in(site, keys["ops"], f"{PREFIX}/runs") == f"{PREFIX}/runs"
    assert _sign_in(site, keys["ops"]) == f"{PREFIX}/"
    # Walk every page the pages link to (each run and document once).
    seen: set[str] = set()
    queue = [f"{PREFIX}/"]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        answer = site.get(path)
        assert answer.status_code == 200, (path, answer.text[:300])
        if not answer.headers["content-type"].startswith("text/html"):
            continue
        for link in _under_prefix(answer.text, path):
            target = link.split("#", 1)[0]
            posted = ("/stuck/", "/decision", "/sign-out")  # form actions: posted below
            if target and target not in seen and not any(p in target for p in posted):
                queue.append(target)
    expected = {f"{PREFIX}/{page}" for page in (
        "", "runs", "documents", "inbox", "notifications", "dead-letters", "definitions",
        "static/charter.css", f"documents/{doc.id}", f"runs/{doc.workflow.run_id}")}  # fmt: skip
    assert expected <= seen, expected - seen
    # Every form post answers with a redirect under the prefix.
    site.post(f"{PREFIX}/sign-out", data={"csrf": _csrf(site.get(f"{PREFIX}/").text)})
    _sign_in(site, keys["clerk2"])
    inbox = site.get(f"{PREFIX}/inbox").text
    [request_id] = [r.id for r in acme.approvals.inbox("clerk2") if r.document_id == doc.id]
    assert f'href="{PREFIX}/inbox/{request_id}"' in inbox
    request_page = site.get(f"{PREFIX}/inbox/{request_id}").text
    _under_prefix(request_page, "the request's page")
    assert f'action="{PREFIX}/inbox/{request_id}/decision"' in request_page
    version = acme.approvals.get(request_id).entity_version
    posts = [
        (f"/inbox/{request_id}/decision", {"decision": "approved", "version": str(version)},
         "/inbox"),
        ("/notifications", {"action": "all"}, "/notifications"),
    ]  # fmt: skip
    for path, form, back in posts:
        token = _csrf(site.get(f"{PREFIX}/inbox").text)
        answer = site.post(f"{PREFIX}{path}", data={**form, "csrf": token})
        assert answer.status_code == 303, (path, answer.text[:300])
        assert answer.headers["location"] == f"{PREFIX}{back}", path
    site.post(f"{PREFIX}/sign-out", data={"csrf": _csrf(site.get(f"{PREFIX}/").text)})
    _sign_in(site, keys["ops"])
    [letter] = acme.dead_letters.list()
    run_id = doc.workflow.run_id
    posts = [
        ("/dead-letters", {"action": "retry", "id": str(letter.id)}, "/dead-letters"),
        (f"/documents/{paused.id}", {"action": "pause"}, f"/documents/{paused.id}"),
        (f"/documents/{paused.id}", {"action": "resume"}, f"/documents/{paused.id}"),
        (f"/runs/{run_id}", {"action": "none"}, f"/runs/{run_id}"),
        (f"/stuck/{run_id}", {"action": "none"}, "/"),
    ]
    for path, form, back in posts:
        token = _csrf(site.get(f"{PREFIX}/").text)
        answer = site.post(f"{PREFIX}{path}", data={**form, "csrf": token})
        assert answer.status_code == 303, (path, answer.text[:300])
        assert answer.headers["location"] == f"{PREFIX}{back}", path
    answer = site.post(f"{PREFIX}/sign-out", data={"csrf": _csrf(site.get(f"{PREFIX}/").text)})
    assert answer.headers["location"] == f"{PREFIX}/sign-in"
    # An error page's links stay under the prefix too.
    _sign_in(site, keys["ops"])
    missing = site.get(f"{PREFIX}/runs/nope")
    assert missing.status_code == 404
    _under_prefix(missing.text, "error page")


def test_the_inbox_page_takes_the_same_queries_for_one_request_or_three(
    ops_site, keys, acme, engine
):
    site, inner = ops_site
    store = inner.state.client.store
    calls: list[str] = []
    execute = store.execute

    async def counted(call: Call[Any], connection: Any = None) -> Any:
        calls.append(call.query)
        return await execute(call, connection)

    store.execute = counted  # the real statement still runs; its name is written down
    _sign_in(site, keys["clerk2"])

    def inbox_queries(waiting: int) -> list[str]:
        calls.clear()
        page = site.get(f"{PREFIX}/inbox")
        assert page.status_code == 200 and page.text.count('<section class="request"') == waiting
        return list(calls)

    _waiting_request(acme)
    one = inbox_queries(1)
    _waiting_request(acme)
    _waiting_request(acme)
    assert len(acme.approvals.inbox("clerk2")) == 3
    three = inbox_queries(3)
    assert three == one, (one, three)
