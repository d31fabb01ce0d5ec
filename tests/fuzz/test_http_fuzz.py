"""The HTTP API fed hostile requests: every endpoint, hostile path parameters, query
parameters and bodies (fields of the wrong type, numbers past PostgreSQL's range, NULs,
surrogates, nesting past 100 levels, bodies that are no JSON or too large). Every answer is
below 500 and every refusal is the JSON error shape with a code; a refused request writes
nothing (every table hashes the same before and after)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from charter.api import create_app
from charter.api.routes import ROUTES, ApiRoute
from charter.db.store import perform
from charter.ops.api_keys import create_api_key
from tests.fuzz.ledger import changed, record, table_hashes
from tests.fuzz.strategies import NUL_TEXT, SURROGATE_TEXT, hostile_json, hostile_text, settings_for
from tests.runtime_fixtures import acme, keys  # noqa: F401  (fixtures)

LIMIT = 256 * 1024


@pytest.fixture
def site(db_url, login, acme, monkeypatch) -> Iterator[tuple[TestClient, dict[str, str]]]:  # noqa: F811
    """The API on charter_app, with an admin's key of org acme (so no endpoint stops at 403)
    and one existing document."""
    monkeypatch.setenv("CHARTER_MAX_BODY_BYTES", str(LIMIT))
    acme.directory.put_user("root", roles=["admin", "ap_clerk"])
    acme.documents.create("ap_invoice", {"grand_total": 1}, actor="root", id="inv-1")
    # The org's webhook secret, made on first use, is made here: an inbound event refused for
    # its signature would otherwise be the first use.
    acme.side_effects.webhook_secret()
    with psycopg.connect(db_url, autocommit=True) as owner:
        key = str(perform(owner, create_api_key("acme", "root", None, None)).key)
    app = create_app(login("charter_app"))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {key}"}


def _jsonable(value: Any) -> Any:
    """A hostile value as something json.dumps writes (what a client could send)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


huge_numbers = st.sampled_from([2**31, -(2**31) - 1, 2**63, -(2**70), 10**30, 10**400])
field_values = st.one_of(hostile_json.map(_jsonable), huge_numbers, hostile_text.map(_jsonable))


def _text(value: str) -> str:
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


path_values = st.one_of(
    st.sampled_from(["inv-1", "x", "%00", "a%00b", "%2F", "..", "%ff", "%ED%A0%80", "%20"]),
    st.one_of(hostile_text.map(str), NUL_TEXT, SURROGATE_TEXT).map(
        lambda text: quote(_text(text)[:300], safe="") or "x"
    ),
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[ApiRoute, str, dict[str, str], bytes | None]:
    route = draw(st.sampled_from(ROUTES))
    path = re.sub(r"{\w+}", lambda _: draw(path_values), route.path)
    query = {}
    if route.method == "GET":
        names = st.sampled_from(
            ["limit", "version", "stuck_minutes", "hours", "after", "state", "flow"]
        )
        for name in draw(st.lists(names, max_size=2)):
            value = draw(st.one_of(hostile_text.map(str), huge_numbers.map(str)))
            query[name] = _text(value)[:500]  # longer is a URL no client sends
    body: bytes | None = None
    if route.body is not None:
        kind = draw(st.sampled_from(["fields", "fields", "fields", "raw", "deep", "big"]))
        if kind == "fields":
            fields = list(route.body.get("properties", {})) or ["x"]
            data = {name: draw(field_values) for name in draw(st.lists(st.sampled_from(fields)))}
            body = json.dumps(data, ensure_ascii=draw(st.booleans())).encode(
                "utf-8", "surrogatepass"
            )
        elif kind == "raw":
            body = draw(st.sampled_from([b"", b"{", b"[]", b"null", b"9" * 5000, b"\xff\xfe",
                                         b'{"a": NaN}', b'{"a": 1e999}', b'{"a": "\\ud800"}',
                                         b'{"a": "\\u0000"}', b'{"a":1,"a":2}']))  # fmt: skip
        elif kind == "deep":
            depth = draw(st.sampled_from([101, 1_000, 100_000]))
            body = b'{"data":' + b"[" * depth + b"]" * depth + b"}"
        else:
            body = b'{"x": "' + b"x" * LIMIT + b'"}'
    return route, path, query, body


@settings_for(300)
@given(request=requests())
def test_every_endpoint_answers_hostile_requests_with_a_coded_4xx(site, db_url, request):
    client, auth = site
    route, path, query, body = request
    before = table_hashes(db_url)
    answer = client.request(route.method, path, params=query, content=body,
                            headers={**auth, "Content-Type": "application/json"})  # fmt: skip
    record("http", answer.status_code >= 400)
    assert answer.status_code < 500, (route.path, path, answer.text[:500])
    if answer.status_code >= 400:
        assert answer.headers["content-type"] == "application/json", answer.text[:300]
        error = answer.json()["error"]
        assert re.fullmatch(r"[A-Z_]+", error["code"]) and error["message"].strip()
        written = changed(before, table_hashes(db_url))
        assert written == [], (route.path, written, answer.text[:300])
