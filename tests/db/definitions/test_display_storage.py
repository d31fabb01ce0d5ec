"""The database checks a contract's display as the DSL does (DISPLAY_INVALID at publish,
even for a contract sent past the Python model), and renders a document's title with one
function, charter._document_title, that documents and approval requests carry."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from charter import Client
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.db.sqlstate import charter_errors
from charter.demos.use_cases import invoice_contract
from charter.dsl.contract import EntityContract
from charter.errors import ContractDisplayInvalidError
from tests.dsl.test_contract_display import BAD_DISPLAYS
from tests.runtime_definitions import contract as small_contract

ORG = "acme"
# The fields of use case A's invoice, which the DSL test's displays name.
FIELDS = {**invoice_contract()["fields"], "paid": "boolean"}


def _title(conn: psycopg.Connection[Any], display: Any, data: dict[str, Any]) -> str:
    row = conn.execute(
        "SELECT charter._document_title(%s, 'ap_invoice', '0d6eecc4-1111-2222', 'submitted', %s)",
        (Jsonb(display) if display is not None else None, Jsonb(data)),
    ).fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize(
    ("template", "data", "title"),
    [
        ("Invoice {invoice_no} — {vendor}", {"invoice_no": "A-17", "vendor": "Acme"},
         "Invoice A-17 — Acme"),
        ("Invoice {invoice_no} — {vendor}", {"invoice_no": "A-17"}, "Invoice A-17 — —"),
        ("Invoice {invoice_no} — {vendor}", {"invoice_no": "A-17", "vendor": None},
         "Invoice A-17 — —"),
        ("Invoice {invoice_no} — {vendor}", {"invoice_no": "", "vendor": "Acme"},
         "Invoice — — Acme"),
        ("{vendor}: {grand_total} (paid {paid})", {"vendor": "Acme", "grand_total": 1200.5,
                                                   "paid": False}, "Acme: 1200.5 (paid false)"),
        ("{entityType} in {state}", {}, "ap_invoice in submitted"),
        ("{{draft}} {invoice_no}", {"invoice_no": "7"}, "{draft} 7"),
        ("Invoice {vendor}", {"vendor": "Acme\n  Corp\t"}, "Invoice Acme Corp"),
        ("Invoice {vendor}", {"vendor": "<b>Acme</b>"}, "Invoice <b>Acme</b>"),
    ],
)  # fmt: skip
def test_the_title_renders_the_template(conn, template: str, data: Any, title: str) -> None:
    assert _title(conn, {"title": template}, data) == title


def test_a_long_value_is_cut_at_200_characters(conn) -> None:
    title = _title(conn, {"title": "Invoice {vendor}"}, {"vendor": "x" * 500})
    assert len(title) == 200 and title.endswith("x…")


@pytest.mark.parametrize(
    "display",
    [None, {}, {"summary": ["vendor"]}, {"title": "Invoice {vendor"}, {"title": 7},
     {"title": "   "}, "Invoice {vendor}"],
)  # fmt: skip
def test_without_a_usable_template_the_title_is_the_type_and_the_id(conn, display) -> None:
    assert _title(conn, display, {"vendor": "Acme"}) == "Ap invoice 0d6eecc4"


def test_a_title_of_no_values_yet_is_the_type_and_the_id(conn) -> None:
    display = {"title": "Invoice {invoice_no} — {vendor} ({state})"}
    assert _title(conn, display, {"invoice_no": "", "vendor": None}) == "Ap invoice 0d6eecc4"
    assert _title(conn, display, {"vendor": "Acme"}) == "Invoice — — Acme (submitted)"


def test_the_title_function_is_immutable_for_a_searchable_list(conn) -> None:
    volatility = conn.execute(
        "SELECT provolatile FROM pg_proc WHERE oid = 'charter._document_title'::regproc"
    ).fetchone()
    assert volatility == ("i",)


def _contract(display: Any) -> dict[str, Any]:
    return small_contract("bill", FIELDS, display=display)


def _publish_raw(conn: psycopg.Connection[Any], contract: dict[str, Any]) -> Any:
    """As a caller of the SQL API could: the envelope of a valid contract, the contract's
    JSON as sent."""
    valid = EntityContract.from_json({k: v for k, v in contract.items() if k != "display"})
    envelope = generate_envelope(valid)
    with charter_errors():
        return conn.execute(
            "SELECT charter.publish_contract(%s, %s, %s)",
            (Jsonb(contract), Jsonb(envelope), Jsonb(compile_effective(envelope))),
        ).fetchone()


@pytest.mark.parametrize(("display", "says"), BAD_DISPLAYS)
def test_the_database_refuses_what_the_dsl_refuses(conn, display: Any, says: str) -> None:
    with pytest.raises(ContractDisplayInvalidError) as refused:
        EntityContract.from_json(_contract(display))
    with pytest.raises(ContractDisplayInvalidError) as stored:
        _publish_raw(conn, _contract(display))
    assert stored.value.code == refused.value.code == "DISPLAY_INVALID"
    assert "display" in str(stored.value)


@pytest.mark.parametrize(
    "display",
    [{"title": "Invoice {invoice_no} — {vendor}", "columns": ["invoice_no", "vendor"],
      "summary": ["vendor", "grand_total"]},
     {"title": "{{x}} {entityType} {state}"}, {"summary": []}, {}],
)  # fmt: skip
def test_the_database_stores_what_the_dsl_accepts(conn, display: Any) -> None:
    EntityContract.from_json(_contract(display))
    published = _publish_raw(conn, _contract(display))
    assert published is not None and published[0]["status"] == "published"


def test_documents_carry_their_title(db_url) -> None:
    titled = small_contract("bill", FIELDS, display={"title": "Bill {invoice_no} — {vendor}"})
    plain = small_contract("chit", FIELDS)
    with Client(db_url, org_id=ORG) as client:
        client.definitions.publish(titled)
        client.definitions.publish(plain)
        client.directory.put_user("ann", roles=["clerk"])
        bill = client.documents.create("bill", {"invoice_no": "B-1"}, actor="ann")
        assert bill.title == "Bill B-1 — —"
        client.documents.update(bill.id, {"vendor": "Acme"}, actor="ann")
        assert client.documents.get(bill.id).title == "Bill B-1 — Acme"
        assert client.documents.get(bill.id, version=1).title == "Bill B-1 — —"
        chit = client.documents.create("chit", {"invoice_no": "C-1"}, actor="ann")
        assert chit.title == f"Chit {chit.id[:8]}"
        listed = {d.id: d.title for d in client.documents.list()}
        assert listed == {bill.id: "Bill B-1 — Acme", chit.id: f"Chit {chit.id[:8]}"}
