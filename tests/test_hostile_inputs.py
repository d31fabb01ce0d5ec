"""What the fuzz tests (tests/fuzz) found in the pure layers, pinned one case each: every
bad input is a CharterError with a code and a message that says what to fix."""

from __future__ import annotations

import copy
import functools
import math
from typing import Any

import pytest

from charter import Flow, canonical_json
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.dsl.contract import EntityContract
from charter.errors import (
    ArgumentError,
    CanonicalJsonError,
    CharterError,
    ContractError,
    FlowDefinitionError,
    RunInputError,
)
from charter.expr import compile_expression, evaluate
from charter.library.templates import TEMPLATES
from charter.payloads import json_text, shown

TEMPLATE = TEMPLATES["invoice_approval"]


def _envelope() -> dict[str, Any]:
    return generate_envelope(EntityContract.from_json(TEMPLATE.contract))


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def _code(call) -> str:
    with pytest.raises(CharterError) as caught:
        call()
    return caught.value.code


# '$' in a regular expression also matches before a trailing newline; SQL's does not.
def test_a_trailing_newline_never_makes_a_name():
    assert _code(lambda: Flow("orders\n")) == "FLOW_SLUG_INVALID"
    flow = Flow("orders")
    assert _code(lambda: flow.step(slug="first\n")(lambda run: run)) == "FLOW_SLUG_INVALID"
    for field, value in [("entityType", "invoice\n"), ("slots", "slot:x\n")]:
        contract = copy.deepcopy(TEMPLATE.contract)
        if field == "slots":
            contract["slots"][0]["slotId"] = value
        else:
            contract[field] = value
        assert _code(lambda c=contract: EntityContract.from_json(c)) == "CONTRACT_INVALID"
    contract = copy.deepcopy(TEMPLATE.contract)
    contract["transitions"][0]["gate"] = "submit\n"
    assert _code(lambda: EntityContract.from_json(contract)) == "CONTRACT_INVALID"


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"type": "wait_timer", "config": {"duration": "PT1H\n"}}, "ISO 8601 duration"),
        ({"type": "action", "config": {"actionType": "invoice.post\n"}}, "actionType"),
        ({"id": "usr:slot:draft_to_submit:a\n", "type": "rule", "config": {"ruleId": "r"}},
         "must be usr:slot:draft_to_submit:<id>"),
    ],
)  # fmt: skip
def test_a_trailing_newline_never_makes_a_node_setting(node, message):
    org = {
        "baseRef": {"entityType": "invoice", "envelopeVersion": 1},
        "slots": {
            "slot:draft_to_submit": {"nodes": [{"id": "usr:slot:draft_to_submit:a", **node}]}
        },
    }
    with pytest.raises(ContractError, match=message):
        compile_effective(_envelope(), org)


def test_canonical_json_refuses_cycles_depth_and_giant_integers_by_path():
    items: list[Any] = [1]
    items.append(items)
    with pytest.raises(CanonicalJsonError, match=r"\$\[1\]: the value contains itself"):
        canonical_json(items)
    deep: list[Any] = []
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(CanonicalJsonError, match="more than 200 levels deep"):
        canonical_json(deep)
    with pytest.raises(CanonicalJsonError, match="integer of 16610 bits"):
        canonical_json({"n": 10**5000})
    with pytest.raises(CanonicalJsonError, match="the key <int> is a int"):
        canonical_json({10**5000: 1})


def test_expressions_refuse_what_cannot_be_stored_and_read_surrogate_pairs():
    assert _code(lambda: compile_expression("entity.a == 'x\x00'")) == "EXPR_SYNTAX"
    assert _code(lambda: compile_expression("entity.a == 'caf\udce9'")) == "EXPR_SYNTAX"
    assert _code(lambda: compile_expression(r"entity.a == '\u0000'")) == "EXPR_SYNTAX"
    assert _code(lambda: compile_expression(r"entity.a == '\ud800'")) == "EXPR_SYNTAX"
    assert _code(lambda: compile_expression("entity.a > 1e999")) == "EXPR_SYNTAX"
    pair = compile_expression(r"entity.a == '\ud83d\ude00'")
    assert pair["ast"]["args"][1] == {"type": "literal", "value": "\U0001f600"}


@pytest.mark.parametrize(
    "schema",
    ["entity", ["entity"], {"entity": "number"}, {"entity": {"a": "decimal"}}, {"user": {}}],
)
def test_a_malformed_schema_is_an_argument_error(schema):
    with pytest.raises(ArgumentError, match="schema"):
        compile_expression("entity.a == 1", schema)


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"entity": {"a": {1, 2}}}, "not JSON"),
        ({"entity": {"a": math.nan}}, "NaN"),
        ({"entity": {"a": "caf\udce9"}}, "lone surrogate"),
        ({"entity": {"a": "\x00"}}, r"U\+0000"),
        ({"entity": {"a": 1}, "deep": _deep(150)}, "levels deep"),
    ],
)
def test_evaluate_refuses_variables_sql_could_not_take(variables, message):
    with pytest.raises(ArgumentError, match=message):
        evaluate(compile_expression("entity.a == 1"), variables)


def test_evaluate_refuses_what_is_not_a_compiled_expression():
    with pytest.raises(ArgumentError, match="compiled expression"):
        evaluate("entity.a == 1", {})


@pytest.mark.parametrize(
    "org",
    [
        [],
        "org.yaml",
        42,
        {"baseRef": {"entityType": "invoice", "envelopeVersion": 1}, "x": _deep(500)},
    ],
)
def test_an_org_definition_that_is_not_one_is_refused(org):
    with pytest.raises(ContractError) as caught:
        compile_effective(_envelope(), org)
    assert caught.value.code == "ORG_DEFINITION_INVALID"


def test_a_deep_node_configuration_is_refused_before_it_is_walked():
    org = copy.deepcopy(TEMPLATES["simple_fast_track"].org)
    nodes = org["slots"]["slot:submitted_to_approved"]["nodes"]
    webhook = next(n for n in nodes if n["type"] == "webhook_out")
    webhook["config"]["payloadTemplate"] = {"deep": _deep(2_000)}
    with pytest.raises(ContractError, match="more than 100 levels deep"):
        compile_effective(_envelope(), org)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda e: e.clear(), "entityType is not a string"),
        (lambda e: e.update(nodes={"a": 1}), "nodes is not a list"),
        (lambda e: e["edges"].append("edge"), r"edges\[\d+\] is not an object"),
        (lambda e: e["nodes"][0].update(id=7), r"nodes\[0\].id is not a string"),
        (lambda e: e["slots"][0].update(defaultEditWindow="open"), "defaultEditWindow"),
        (lambda e: e.update(editWindows=[]), "editWindows"),
        (lambda e: e["edges"][0].update(priority="high"), "priority"),
    ],
)
def test_a_malformed_envelope_is_refused_by_place(damage, message):
    envelope = _envelope()
    damage(envelope)
    with pytest.raises(ContractError, match=message) as caught:
        compile_effective(envelope, TEMPLATE.org)
    assert caught.value.code == "WORKFLOW_SYSTEM_INTEGRITY"
    with pytest.raises(ContractError, match="is list, not an object"):
        compile_effective([], TEMPLATE.org)


def test_a_patched_slot_whose_edge_is_gone_fails_wf08():
    envelope = _envelope()
    envelope["edges"] = [
        e for e in envelope["edges"] if e["id"] != "sys:state:submitted->sys:gate:approve"
    ]
    with pytest.raises(ContractError, match="system edge sys:state:submitted -> sys:gate:approve"):
        compile_effective(envelope, TEMPLATE.org)


def test_flow_definitions_refuse_odd_arguments_without_crashing_on_them():
    flow = Flow("odd")
    flow.step(slug="first")(lambda run: run)

    def second(first):
        return first

    with pytest.raises(FlowDefinitionError, match="depends_on= takes a list"):
        flow.step(depends_on=5)(second)
    with pytest.raises(FlowDefinitionError, match="no __name__"):
        flow.step(functools.partial(lambda run: run))
    assert flow.step(functools.partial(lambda run: run), slug="partial").slug == "partial"
    with pytest.raises(FlowDefinitionError, match="max_attempts=<int> is out of range"):
        Flow("odd", max_attempts=10**5000)
    with pytest.raises(FlowDefinitionError, match="is not a valid slug"):
        flow.step(slug=10**5000)(lambda run: run)


def test_shown_never_raises_and_stays_short():
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert shown(10**5000) == "<int>"
    assert shown(Broken()) == "<Broken>"
    assert shown("x" * 1_000) == "'" + "x" * 78 + "…"


def test_a_backslash_before_u0000_is_text_not_a_nul():
    # json.dumps writes U+0000 as \u0000 and a backslash followed by "u0000" as \\u0000.
    assert json_text({"pattern": "\\u0000"}, "The run input") == '{"pattern":"\\\\u0000"}'
    assert json_text(["\\\\u0000", "x\\"], "The run input")
    for value in ("\x00", "\\\x00", ["x\\", "\x00"]):
        with pytest.raises(RunInputError, match=r"U\+0000"):
            json_text(value, "The run input")


def test_a_lone_surrogate_in_a_contract_is_named_not_a_crash_of_the_validator():
    contract = copy.deepcopy(TEMPLATE.contract)
    contract["transitions"][0]["from"] = "\ud800"
    with pytest.raises(ContractError, match=r"\\ud800.* is not a declared state"):
        EntityContract.from_json(contract)
