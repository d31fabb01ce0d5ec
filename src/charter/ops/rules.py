"""Rule operations: the org's named, versioned expressions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from charter.db.store import Call, Operation, first_json
from charter.errors import ArgumentError
from charter.expr.compile import compile_expression
from charter.ops.arguments import text_argument


@dataclass(frozen=True)
class Rule:
    rule_id: str
    version: int
    expression: str
    description: str | None
    status: str | None = None  # stored | unchanged (put only)


def _rule(data: dict[str, Any]) -> Rule:
    return Rule(
        data["ruleId"], data["version"], data["expression"], data["description"], data.get("status")
    )


def put_rule(
    org_id: str, rule_id: str, expression: str, description: str | None
) -> Operation[Rule]:
    if not isinstance(expression, str):
        raise ArgumentError(f"a rule's expression is a string, not {type(expression).__name__}")
    # A rule node takes its true or false edge: a rule that cannot be either would strand
    # every document that reaches it.
    compiled = compile_expression(expression, boolean=True)
    params = {
        "org_id": org_id,
        "rule_id": text_argument(rule_id, "rule_id"),
        "expression": expression,
        "ast": Jsonb(compiled["ast"]),
        "description": description,
    }
    return _rule((yield Call("put_rule", params, first_json, what=f"storing rule {rule_id}")))


def get_rule(org_id: str, rule_id: str, version: int | None) -> Operation[Rule]:
    params = {"org_id": org_id, "rule_id": text_argument(rule_id, "rule_id"), "version": version}
    return _rule((yield Call("get_rule", params, first_json)))
