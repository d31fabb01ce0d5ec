"""A published invoice contract (the template's, with fields, policies and actions) and an
org directory, for the documents tests."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.library.templates import TEMPLATES


def invoice_contract() -> dict[str, Any]:
    contract = copy.deepcopy(TEMPLATES["invoice_approval"].contract)
    contract["fields"] = {
        "grand_total": "number",
        "vendor_id": "string",
        "cost_center": "string",
        "gl_batch": "string",
        "posted_at": "string",
        "note": "any",
    }
    # The template's display names its currency field, which these tests' contract drops.
    contract["display"] = {
        "title": "Invoice from {vendor_id} · {grand_total}",
        "columns": ["vendor_id", "grand_total", "cost_center"],
        "summary": ["vendor_id", "grand_total", "cost_center"],
    }
    contract["policies"] = {
        "create": {"roles": ["clerk", "manager"]},
        "cancel": {"rule": "actor.roles contains 'manager'"},
        "approve": {"rule": "org.approvers contains actor.id"},
        "invoice.post": {"roles": ["accountant"]},
        # Closed by default: the rest (update, submit, amend) for the org's roles.
        "*": {"roles": ["clerk", "manager", "accountant"]},
    }
    contract["actions"] = [{"actionType": "invoice.post", "fields": ["gl_batch", "posted_at"]}]
    return contract


@pytest.fixture
def acme(db_url) -> Iterator[Client]:
    """A client of org acme with the invoice contract published and four users."""
    with Client(db_url, org_id="acme") as client:
        client.definitions.publish(invoice_contract())
        client.directory.put_user("u-1", roles=["clerk"], manager="u-9", email="ann@example.com")
        client.directory.put_user("u-2", roles=["manager"])
        client.directory.put_user("u-3", roles=["accountant"])
        client.directory.put_user("u-9", roles=["manager"], phone="+15550100")
        client.directory.put_org({"approvers": ["u-2"], "trusted_vendors": ["v-7"]})
        yield client


def counts(db_url: str) -> tuple[int, ...]:
    """Rows of every documents table: a refused mutation must leave them all unchanged."""
    with psycopg.connect(db_url) as conn:
        return tuple(
            conn.execute(f"SELECT count(*) FROM charter.{table}").fetchone()[0]
            for table in ("documents", "document_versions", "document_audit", "document_events",
                          "outbox_receipts")
        )  # fmt: skip
