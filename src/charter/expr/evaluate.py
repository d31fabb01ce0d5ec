"""Evaluating a compiled expression in Python — the twin of ``charter.eval_expr`` in SQL.

Semantics (both evaluators, checked against each other by a property test):

* a path reads the variables; anything missing, or below a non-object, is ``null``;
* ``==`` / ``!=`` compare JSON values deeply; numbers by value (1 == 1.0), and a boolean is
  never equal to a number;
* ``> >= < <=`` order two numbers or two strings (by code point); anything else is false;
* ``x in list`` / ``list contains x`` test membership (deep equality); ``string contains
  string`` tests for a substring; anything else is false;
* ``&&`` / ``||`` / ``!`` treat exactly ``true`` as true and everything else as false;
* ``now`` is ``variables["now"]`` when given, else the current UTC time in ISO 8601.

The result is the audit record of seed 002: the expression, every variable it read and
the result.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

from charter.errors import ArgumentError, RunInputError
from charter.payloads import json_text


def evaluate(compiled: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    """``{"expression", "variables": {path: value}, "result"}`` for these variables.

    The variables must be JSON that ``charter.eval_expr`` could take as well (no NaN, no
    U+0000 or lone surrogates, at most 100 levels deep); anything else is ArgumentError."""
    if not isinstance(compiled, dict) or not isinstance(compiled.get("ast", compiled), dict):
        raise ArgumentError(
            "evaluate() takes a compiled expression, as compile_expression() returns it."
        )
    ast = compiled.get("ast", compiled)
    try:
        values = json.loads(
            json_text(variables, "The variables object"), parse_float=Decimal, parse_int=Decimal
        )
    except RunInputError as exc:
        raise ArgumentError(exc.message) from None
    read: dict[str, Any] = {}
    result = _eval(ast, values, read)
    return {
        "expression": compiled.get("expression"),
        "variables": {path: _plain(value) for path, value in read.items()},
        "result": _plain(result),
    }


def _eval(ast: dict[str, Any], variables: Any, read: dict[str, Any]) -> Any:
    kind = ast["type"]
    if kind == "literal":
        return _decimal(ast["value"])
    if kind == "var":
        value = _lookup(variables, ast["path"])
        read.setdefault(ast["path"], value)
        return value
    if kind == "now":
        given = variables.get("now") if isinstance(variables, dict) else None
        return given if given is not None else (datetime.datetime.now(datetime.UTC).isoformat())
    if kind == "list":
        return [_eval(item, variables, read) for item in ast["items"]]
    args = [_eval(arg, variables, read) for arg in ast["args"]]  # all read, for the audit
    op = ast["op"]
    if op == "!":
        return args[0] is not True
    if op == "&&":
        return args[0] is True and args[1] is True
    if op == "||":
        return args[0] is True or args[1] is True
    left, right = args
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if op == "in":
        return isinstance(right, list) and any(_equal(left, item) for item in right)
    if op == "contains":
        if isinstance(left, list):
            return any(_equal(item, right) for item in left)
        return isinstance(left, str) and isinstance(right, str) and right in left
    return _order(op, left, right)


def _lookup(variables: Any, path: str) -> Any:
    value = variables
    for name in path.split("."):
        if not isinstance(value, dict) or name not in value:
            return None
        value = value[name]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, Decimal)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _order(op: str, a: Any, b: Any) -> bool:
    comparable = (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))
    if not comparable:
        return False
    if op == ">":
        return bool(a > b)
    if op == ">=":
        return bool(a >= b)
    if op == "<":
        return bool(a < b)
    return bool(a <= b)


def _decimal(value: Any) -> Any:
    """JSON data with every number as a Decimal, so 0.1 means exactly 0.1 (as in SQL)."""
    return json.loads(json.dumps(value), parse_float=Decimal, parse_int=Decimal)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return (
            int(value)
            if value == value.to_integral_value()
            and "E" not in str(value)
            and "." not in str(value)
            else float(value)
        )
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
