"""The typed expression language: grammar, safety limits, type checks, evaluation."""

import pytest

from charter.errors import ExpressionError
from charter.expr import compile_expression, evaluate

VARS = {
    "entity": {
        "grand_total": 25000,
        "vendor_id": "v-9",
        "tags": ["rush", "eu"],
        "note": None,
        "flag": True,
    },
    "actor": {"roles": ["finance_manager", "admin"], "user_id": "u-1"},
    "org": {"currency": "EUR", "trusted_vendors": ["v-1", "v-9"]},
    "context": {"approval_count": 2},
    "now": "2026-11-22T12:00:00+00:00",
}


def run(source, variables=VARS, schema=None):
    return evaluate(compile_expression(source, schema), variables)


def test_the_seeds_example_and_its_audit_record():
    audit = run("entity.grand_total > 10000 && actor.roles contains 'finance_manager'")
    assert audit == {
        "expression": "entity.grand_total > 10000 && actor.roles contains 'finance_manager'",
        "variables": {"entity.grand_total": 25000, "actor.roles": ["finance_manager", "admin"]},
        "result": True,
    }


@pytest.mark.parametrize(
    ("source", "result"),
    [
        ("1 == 1.0", True),
        ("entity.flag == 1", False),
        ("'a' < 'b'", True),
        ("\"double\" == 'double'", True),
        ("entity.vendor_id in org.trusted_vendors", True),
        ("entity.vendor_id in ['v-1']", False),
        ("entity.tags contains 'eu'", True),
        ("entity.vendor_id contains '-'", True),
        ("entity.missing == null", True),
        ("entity.note == null", True),
        ("entity.missing.deeper == null", True),
        ("!entity.missing", True),
        ("!(context.approval_count >= 2)", False),
        ("entity.grand_total > 'x'", False),
        ("entity.grand_total > 10000 || false", True),
        ("now >= '2026-01-01'", True),
        ("[1, 2] == [1.0, 2]", True),
        ("entity.tags == ['rush', 'eu']", True),
        ("context", {"approval_count": 2}),
        ("-1.5e2 < -100", True),
        ("'it\\'s' == \"it's\"", True),
        ("null", None),
    ],
)
def test_semantics(source, result):
    assert run(source)["result"] == result


def test_without_now_in_the_variables_now_is_the_current_time():
    assert run("now > '2026-01-01'", {})["result"] is True


@pytest.mark.parametrize(
    ("source", "code", "column"),
    [
        ("entity.total + 1 > 5", "EXPR_FORBIDDEN", 14),
        ("entity.name =~ 'x.*'", "EXPR_FORBIDDEN", 13),
        ("entity.name matches 'x'", "EXPR_FORBIDDEN", 13),
        ("upper(entity.name) == 'X'", "EXPR_FORBIDDEN", 6),
        ("for x in entity.items", "EXPR_FORBIDDEN", 1),
        ("secrets.key == 1", "EXPR_UNKNOWN_VARIABLE", 1),
        ("entity.total > ", "EXPR_SYNTAX", 15),
        ("entity.total = 5", "EXPR_SYNTAX", 14),
        ("(entity.total > 5", "EXPR_SYNTAX", 18),
        ("1 == 'one'", "EXPR_TYPE_MISMATCH", 3),
        ("true > false", "EXPR_TYPE_MISMATCH", 6),
        ("1 in 2", "EXPR_TYPE_MISMATCH", 3),
        ("5 contains 1", "EXPR_TYPE_MISMATCH", 3),
        ("entity.total > 5 && 3", "EXPR_TYPE_MISMATCH", 21),
        ("'bad \\q escape' == 'x'", "EXPR_SYNTAX", 6),
    ],
)
def test_rejected_expressions_name_the_rule_and_the_position(source, code, column):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    assert caught.value.code == code
    assert (caught.value.line, caught.value.column) == (1, column)
    assert f"column {column}" in caught.value.message
    assert source in caught.value.message  # shown with a caret under the position


def test_unknown_fields_are_refused_when_the_entity_declares_its_fields():
    schema = {"entity": {"grand_total": "number", "vendor_id": "string"}}
    assert compile_expression("entity.grand_total > 5", schema)
    with pytest.raises(ExpressionError) as caught:
        compile_expression("entity.grand_totl > 5", schema)
    assert caught.value.code == "EXPR_UNKNOWN_VARIABLE"
    assert "declared: grand_total, vendor_id" in caught.value.message
    with pytest.raises(ExpressionError, match="orders two numbers or two strings") as typed:
        compile_expression("entity.vendor_id > 5", schema)
    assert typed.value.code == "EXPR_TYPE_MISMATCH"
    # roots without a declaration accept any path; missing ones read as null
    assert run("actor.anything == null", VARS, schema)["result"] is True


def test_the_safety_limits():
    with pytest.raises(ExpressionError) as long:
        compile_expression("entity.a == 1 || " * 40 + "true")
    assert long.value.code == "EXPR_TOO_LONG"
    deep = "!" * 10 + "true"
    with pytest.raises(ExpressionError) as too_deep:
        compile_expression(deep)
    assert too_deep.value.code == "EXPR_TOO_DEEP"
    assert compile_expression("!" * 9 + "true")
    many = "[" + ", ".join(f"entity.f{i}.x" for i in range(11)) + "] == []"  # 22 dereferences
    with pytest.raises(ExpressionError) as derefs:
        compile_expression(many)
    assert derefs.value.code == "EXPR_TOO_MANY_DEREFERENCES"


def test_the_ast_is_plain_json():
    import json

    compiled = compile_expression("entity.x in [1, 'a', true, null] && !(now < '2020')")
    assert json.loads(json.dumps(compiled)) == compiled
