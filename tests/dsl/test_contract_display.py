"""A contract's display (title template, list columns, summary): what an author writes is
accepted, what a slip makes is refused at publish as DISPLAY_INVALID, naming what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from charter.canonical import canonical_hash
from charter.demos.use_cases import invoice_contract
from charter.dsl.contract import EntityContract, title_placeholders
from charter.errors import ContractDisplayInvalidError, ContractError
from charter.templates import TEMPLATES
from tests.runtime_definitions import contract as runtime_contract


def _with(display: Any) -> dict[str, Any]:
    return {**invoice_contract(), "display": display}


@pytest.mark.parametrize(
    "display",
    [
        {"title": "Invoice {invoice_no} — {vendor}"},
        {"title": "{entityType} in {state}: {invoice_no}"},
        {"title": "Invoice {{draft}} {invoice_no}"},  # literal braces
        {"columns": ["invoice_no", "vendor", "grand_total"]},
        {
            "summary": [
                "invoice_no",
                "vendor",
                "grand_total",
                "cost_center",
                "gl_batch",
                "posted_at",
            ]
        },
        {"summary": []},
        {},
    ],
)
def test_a_display_of_declared_fields_is_accepted(display: dict[str, Any]) -> None:
    contract = EntityContract.from_json(_with(display))
    assert contract.to_json()["display"] == display


# What an author's slip makes, and what the refusal says.
BAD_DISPLAYS: list[tuple[Any, str]] = [
    ({"title": "Invoice {invoice_no"}, "'{' at character 9"),
    ({"title": "Invoice } {invoice_no}"}, "'}' at character 9"),
    ({"title": "Invoice { invoice_no }"}, "is not closed or does not hold a name"),
    ({"title": "Invoice {invoice.no}"}, "write {{ or }} for a literal brace"),
    ({"title": "Invoice {number}"}, "display.title names 'number', which is not a declared"),
    ({"title": "   "}, "display.title is empty"),
    ({"title": "x" * 201}, "at most 200"),
    ({"columns": ["vendor", "amount"]}, "display.columns names 'amount'"),
    ({"columns": []}, "display.columns is empty"),
    ({"columns": ["vendor", "vendor"]}, "display.columns lists 'vendor' twice"),
    (
        {"summary": ["invoice_no", "vendor", "grand_total", "cost_center", "gl_batch",
                     "posted_at", "vendor_id"]},
        "display.summary lists 7 fields; a summary shows at most 6",
    ),
    ({"summary": ["Vendor", "Total"]}, "'Vendor', 'Total', which are not declared fields"),
    ({"summary": "vendor"}, "display.summary: Input should be a valid list"),
    ({"titel": "Invoice {invoice_no}"}, "display.titel: Extra inputs are not permitted"),
    ("Invoice {invoice_no}", "display: Input should be"),
]  # fmt: skip


@pytest.mark.parametrize(("display", "says"), BAD_DISPLAYS)
def test_a_slip_in_the_display_is_display_invalid(display: Any, says: str) -> None:
    with pytest.raises(ContractDisplayInvalidError) as refused:
        EntityContract.from_json(_with(display))
    assert refused.value.code == "DISPLAY_INVALID"
    assert says in str(refused.value)


def test_the_refusal_lists_the_declared_fields_to_choose_from() -> None:
    with pytest.raises(ContractDisplayInvalidError, match="the declared fields are grand_total"):
        EntityContract.from_json(_with({"title": "Invoice {number}"}))


def test_a_display_of_a_contract_without_fields_says_to_declare_them() -> None:
    contract = {k: v for k, v in _with({"summary": ["vendor"]}).items() if k != "fields"}
    contract["actions"] = None
    contract["policies"] = {"*": {"roles": ["ap_clerk"]}}
    with pytest.raises(ContractDisplayInvalidError, match='declare them under "fields" first'):
        EntityContract.from_json(contract)
    # The built-ins need no fields.
    contract["display"] = {"title": "{entityType} ({state})"}
    assert EntityContract.from_json(contract).display is not None


def test_display_problems_join_the_others_when_the_contract_has_more() -> None:
    contract = _with({"summary": ["nope"]})
    contract["states"] = [*contract["states"], {"id": "Bad", "editWindow": "locked"}]
    with pytest.raises(ContractError) as refused:
        EntityContract.from_json(contract)
    assert refused.value.code == "CONTRACT_INVALID"
    assert "'Bad'" in str(refused.value) and "display.summary names 'nope'" in str(refused.value)


def test_title_placeholders_reads_a_template_in_order() -> None:
    assert title_placeholders("Invoice {invoice_no} — {vendor} {{x}}") == ["invoice_no", "vendor"]
    assert title_placeholders("") == []


def test_a_contract_without_display_stores_and_hashes_as_before() -> None:
    small = EntityContract.from_json(
        runtime_contract("work_item", {"total": "number", "ref": "string"})
    )
    assert "display" not in small.stored_json()
    # The hash this contract had before display existed.
    assert canonical_hash(small.stored_json()) == (
        "697ca6494512f68e22e7d949dae2a4407d60209fb8601dd978db3148d8336130"
    )
    # Written out with display: null it is the same contract.
    again = runtime_contract("work_item", {"total": "number", "ref": "string"}, display=None)
    assert EntityContract.from_json(again).stored_json() == small.stored_json()


def test_use_case_a_and_the_templates_carry_a_valid_display() -> None:
    assert EntityContract.from_json(invoice_contract()).display is not None
    for template in TEMPLATES.values():
        contract = EntityContract.from_json(template.contract)
        assert contract.display is not None and contract.display.title, template.name
