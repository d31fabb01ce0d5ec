"""The documents, directory and definitions API with hostile arguments: a CharterError for
every bad one, and nothing written by a refused call (every table hashes the same)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from charter import Client
from tests.fuzz.ledger import changed, record, table_hashes
from tests.fuzz.strategies import (
    charter_error_or_result,
    hostile_argument,
    hostile_value,
    settings_for,
)
from tests.ops.documents.conftest import invoice_contract


@pytest.fixture
def acme(db_url):
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(invoice_contract())
        client.directory.put_user("u-1", roles=["clerk", "manager"])
        doc = client.documents.create("invoice", {"grand_total": 1}, actor="u-1", id="inv-1")
        yield client, doc


CALLS = {
    "create type": lambda c, v: c.documents.create(v, {}, actor="u-1"),
    "create data": lambda c, v: c.documents.create("invoice", v, actor="u-1"),
    "create id": lambda c, v: c.documents.create("invoice", {}, actor="u-1", id=v),
    "update id": lambda c, v: c.documents.update(v, {"grand_total": 2}, actor="u-1"),
    "update changes": lambda c, v: c.documents.update("inv-1", v, actor="u-1"),
    "update actor": lambda c, v: c.documents.update("inv-1", {}, actor=v),
    "update version": lambda c, v: c.documents.update("inv-1", {}, actor="u-1", expected_version=v),
    "update reason": lambda c, v: c.documents.update("inv-1", {}, actor="u-1", reason=v),
    "transition gate": lambda c, v: c.documents.transition("inv-1", v, actor="u-1"),
    "transition to": lambda c, v: c.documents.transition("inv-1", "submit", actor="u-1", to=v),
    "amend": lambda c, v: c.documents.amend("inv-1", v, actor="u-1"),
    "get version": lambda c, v: c.documents.get("inv-1", version=v),
    "list state": lambda c, v: c.documents.list(state=v),
    "list type": lambda c, v: c.documents.list(entity_type=v),
    "list limit": lambda c, v: c.documents.list(limit=v),
    "list after": lambda c, v: c.documents.list(after=v),
    "history": lambda c, v: c.documents.history(v),
    "put user": lambda c, v: c.directory.put_user(v),
    "put user roles": lambda c, v: c.directory.put_user("u-2", roles=v),
    "put user email": lambda c, v: c.directory.put_user("u-2", email=v),
    "users with role": lambda c, v: c.directory.users_with_role(v),
    "put org": lambda c, v: c.directory.put_org(v),
    "publish": lambda c, v: c.definitions.publish(v),
    "save draft": lambda c, v: c.definitions.save_draft(v),
    "archive": lambda c, v: c.definitions.archive(v),
    "current": lambda c, v: c.definitions.current(v),
}


@settings_for(120)
@given(which=st.sampled_from(sorted(CALLS)), value=st.one_of(hostile_argument, hostile_value))
def test_every_documents_call_refuses_hostile_arguments_with_a_code(acme, db_url, which, value):
    client, _ = acme
    before = table_hashes(db_url)
    outcome = charter_error_or_result(lambda: CALLS[which](client, value))
    record("client", isinstance(outcome, Exception))
    if isinstance(outcome, Exception):
        assert changed(before, table_hashes(db_url)) == [], (which, outcome)
