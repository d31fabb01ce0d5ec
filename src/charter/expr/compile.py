"""Compiling an expression: parse with a real grammar, enforce the safety limits, type-check
against the declared fields, and emit the JSON AST that the compiled workflow stores.

>>> compile_expression("entity.grand_total > 10000 && actor.roles contains 'cfo'")["ast"]["op"]
'&&'

The AST, evaluated identically by :mod:`charter.expr.evaluate` and ``charter.eval_expr`` in
SQL::

    {"type": "literal", "value": <json>}        {"type": "var", "path": "entity.total"}
    {"type": "now"}                              {"type": "list", "items": [<ast>, ...]}
    {"type": "op", "op": "==|!=|>|>=|<|<=|in|contains|&&|||!", "args": [<ast>, ...]}
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from charter.errors import ArgumentError, ExpressionError
from charter.payloads import shown

MAX_LENGTH = 500
MAX_DEPTH = 10
MAX_DEREFERENCES = 20
ROOTS = ("entity", "actor", "org", "context")
TYPES = ("number", "string", "boolean", "null", "array", "object", "any")

Schema = dict[str, dict[str, str]]  # root -> field -> type, for the roots that declare fields


@dataclass(frozen=True)
class _Typed:
    ast: dict[str, Any]
    type: str
    line: int
    column: int


@cache
def _parser() -> Lark:
    grammar = resources.files("charter.expr").joinpath("grammar.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def compile_expression(
    source: str, schema: Schema | None = None, *, boolean: bool = False
) -> dict[str, Any]:
    """``{"expression": source, "ast": ...}``, or ExpressionError naming the position and rule.

    ``schema`` declares the fields of some roots (``{"entity": {"grand_total": "number"}}``);
    a path into a declared root must name a declared field. Without a declaration a path
    that is missing at run time reads as null. ``boolean=True`` is for what decides
    (conditions, edge conditions, rules, policy rules): an expression that cannot be true or
    false is EXPR_TYPE_MISMATCH (one of unknown type, a path nothing declares, passes).
    """
    return _compile(source, schema, boolean)[0]


def expression_type(source: str, schema: Schema | None = None, *, boolean: bool = False) -> str:
    """The type ``source`` evaluates to (one of :data:`TYPES`), checked as
    :func:`compile_expression` checks it; an editor shows it beside the expression."""
    return _compile(source, schema, boolean)[1]


def _compile(source: str, schema: Schema | None, boolean: bool) -> tuple[dict[str, Any], str]:
    if not isinstance(source, str):
        raise ExpressionError("An expression must be a string.", code="EXPR_SYNTAX")
    schema = _checked_schema(schema)
    if len(source) > MAX_LENGTH:
        raise _error(
            source,
            1,
            MAX_LENGTH + 1,
            "EXPR_TOO_LONG",
            f"the expression is {len(source)} characters long; the limit is "
            f"{MAX_LENGTH}. Split the logic over several conditions",
        )
    _check_characters(source)
    try:
        tree = _parser().parse(source)
    except UnexpectedInput as exc:
        raise _syntax_error(source, exc) from None
    typed = _Checker(source, schema).visit(tree)
    if boolean and typed.type not in ("boolean", "any"):
        raise _error(
            source,
            typed.line,
            typed.column,
            "EXPR_TYPE_MISMATCH",
            f"this decides between true and false, but it is {_a(typed.type)}; compare it "
            "(e.g. entity.grand_total > 0, entity.status == 'open') or combine comparisons "
            "with && and ||",
        )
    _check_depth(source, typed.ast, tree)
    _check_dereferences(source, typed.ast)
    return {"expression": source, "ast": typed.ast}, typed.type


def _checked_schema(schema: Any) -> Schema:
    """The declared fields, or ArgumentError naming what is wrong with them."""
    if schema is None:
        return {}
    example = 'e.g. {"entity": {"grand_total": "number"}}'
    if not isinstance(schema, dict):
        raise ArgumentError(
            f"The schema must map roots to their fields' types ({example}), not "
            f"{type(schema).__name__}."
        )
    for root, fields in schema.items():
        if root not in ROOTS:
            raise ArgumentError(
                f"The schema declares {shown(root)}, which is not a root; roots are "
                f"{', '.join(ROOTS)} ({example})."
            )
        if not isinstance(fields, dict):
            raise ArgumentError(
                f"The schema's {root} must map field names to types ({example}), not "
                f"{type(fields).__name__}."
            )
        for name, kind in fields.items():
            if not isinstance(name, str) or kind not in TYPES:
                raise ArgumentError(
                    f"The schema's field {root}.{shown(name)} has type {shown(kind)}; types "
                    f"are {', '.join(TYPES)}."
                )
    return schema


def _check_characters(source: str) -> None:
    """Compiled expressions are stored as JSON in PostgreSQL, which refuses U+0000 and lone
    surrogates (characters that are not valid Unicode)."""
    for index, char in enumerate(source):
        if char == "\x00" or 0xD800 <= ord(char) <= 0xDFFF:
            before = source[:index]
            line = before.count("\n") + 1
            column = index - (before.rfind("\n") + 1) + 1
            what = "U+0000" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
            raise _error(
                source.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8"),
                line,
                column,
                "EXPR_SYNTAX",
                f"the expression contains {what}, which is not allowed; remove it, or "
                "decode the text properly",
            )


class _Checker:
    def __init__(self, source: str, schema: Schema) -> None:
        self.source = source
        self.schema = schema

    def visit(self, node: Tree[Token] | Token) -> _Typed:
        if isinstance(node, Token):  # `now` arrives as a bare token when it stands alone
            return _Typed({"type": "now"}, "string", node.line or 1, node.column or 1)
        line, column = node.meta.line, node.meta.column
        kind = node.data
        if kind == "number":
            text = str(node.children[0])
            value: Any = int(text) if re.fullmatch(r"-?\d+", text) else float(Decimal(text))
            if not math.isfinite(value):
                raise _error(
                    self.source,
                    line,
                    column,
                    "EXPR_SYNTAX",
                    f"the number {text[:40]} is beyond the range of JSON numbers "
                    "(about ±1.8e308); use a smaller one",
                )
            return _Typed({"type": "literal", "value": value}, "number", line, column)
        if kind == "string":
            return _Typed(
                {"type": "literal", "value": _unescape(self.source, _token(node))},
                "string",
                line,
                column,
            )
        if kind in ("true", "false"):
            return _Typed({"type": "literal", "value": kind == "true"}, "boolean", line, column)
        if kind == "null":
            return _Typed({"type": "literal", "value": None}, "null", line, column)
        if kind == "now":
            return _Typed({"type": "now"}, "string", line, column)
        if kind == "path":
            return self._path(node)
        if kind == "list_":
            items = [self.visit(child) for child in node.children]
            return _Typed({"type": "list", "items": [i.ast for i in items]}, "array", line, column)
        if kind == "not_":
            arg = self.visit(node.children[0])
            self._expect_boolean(arg, "!")
            return _Typed({"type": "op", "op": "!", "args": [arg.ast]}, "boolean", line, column)
        if kind in ("and_", "or_"):
            op = "&&" if kind == "and_" else "||"
            left, right = (self.visit(child) for child in node.children)
            self._expect_boolean(left, op)
            self._expect_boolean(right, op)
            return _Typed(
                {"type": "op", "op": op, "args": [left.ast, right.ast]}, "boolean", line, column
            )
        if kind == "compare":
            left_node, comparator, right_node = node.children
            left, right = self.visit(left_node), self.visit(right_node)
            op = str(comparator)
            assert isinstance(comparator, Token)
            self._check_comparison(op, left, right, comparator)
            return _Typed(
                {"type": "op", "op": op, "args": [left.ast, right.ast]}, "boolean", line, column
            )
        raise AssertionError(f"unexpected node {kind}")

    def _path(self, node: Tree[Token]) -> _Typed:
        names = [str(token) for token in node.children]
        line, column = node.meta.line, node.meta.column
        root = names[0]
        if root not in ROOTS:
            raise _error(
                self.source,
                line,
                column,
                "EXPR_UNKNOWN_VARIABLE",
                f"'{root}' is not a variable; paths start with {', '.join(ROOTS)} (or use now)",
            )
        if len(names) == 1:
            return _Typed({"type": "var", "path": root}, "object", line, column)
        declared = self.schema.get(root)
        kind = "any"
        if declared is not None:
            field = names[1]
            if field not in declared:
                known = ", ".join(sorted(declared)) or "none"
                raise _error(
                    self.source,
                    line,
                    column,
                    "EXPR_UNKNOWN_VARIABLE",
                    f"{root}.{field} is not a declared field of {root} (declared: {known})",
                )
            kind = declared[field] if len(names) == 2 else "any"
        return _Typed({"type": "var", "path": ".".join(names)}, kind, line, column)

    def _expect_boolean(self, operand: _Typed, op: str) -> None:
        if operand.type not in ("boolean", "any"):
            raise _error(
                self.source,
                operand.line,
                operand.column,
                "EXPR_TYPE_MISMATCH",
                f"'{op}' needs true/false, but this is {_a(operand.type)}; compare it "
                "first (e.g. == or >)",
            )

    def _check_comparison(self, op: str, left: _Typed, right: _Typed, at: Token) -> None:
        a, b = left.type, right.type
        line, column = at.line or 1, at.column or 1
        if op in ("==", "!="):
            if "any" in (a, b) or "null" in (a, b) or a == b:
                return
            raise _error(
                self.source,
                line,
                column,
                "EXPR_TYPE_MISMATCH",
                f"'{op}' compares {_a(a)} with {_a(b)}, which can never be equal",
            )
        if op in (">", ">=", "<", "<="):
            if (a in ("number", "any") and b in ("number", "any")) or (
                a in ("string", "any") and b in ("string", "any")
            ):
                return
            raise _error(
                self.source,
                line,
                column,
                "EXPR_TYPE_MISMATCH",
                f"'{op}' orders two numbers or two strings, not {_a(a)} and {_a(b)}",
            )
        if op == "in":
            if b in ("array", "any"):
                return
            raise _error(
                self.source,
                line,
                column,
                "EXPR_TYPE_MISMATCH",
                f"'in' needs a list on its right, not {_a(b)}",
            )
        if op == "contains":
            if a in ("array", "string", "any"):
                return
            raise _error(
                self.source,
                line,
                column,
                "EXPR_TYPE_MISMATCH",
                f"'contains' needs a list or a string on its left, not {_a(a)}",
            )


def _token(node: Tree[Token]) -> Token:
    child = node.children[0]
    assert isinstance(child, Token)
    return child


def _a(kind: str) -> str:
    return {
        "any": "a value of unknown type",
        "array": "a list",
        "object": "an object",
        "null": "null",
    }.get(kind, f"a {kind}")


def _unescape(source: str, token: Token) -> str:
    body = str(token)[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        simple = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "/": "/"}
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
            code = int(body[i + 2 : i + 6], 16)
            low = body[i + 6 : i + 12]
            if 0xD800 <= code <= 0xDBFF and re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", low):
                # a surrogate pair, as JSON writes characters beyond U+FFFF
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00)
                i += 6
            elif code == 0 or 0xD800 <= code <= 0xDFFF:
                raise _error(
                    source,
                    token.line or 1,
                    (token.column or 1) + i + 1,
                    "EXPR_SYNTAX",
                    f"'\\u{body[i + 2 : i + 6]}' is not a character a string can hold "
                    "(U+0000 and lone surrogates cannot be stored); remove it",
                )
            out.append(chr(code))
            i += 6
        else:
            raise _error(
                source,
                token.line or 1,
                (token.column or 1) + i + 1,
                "EXPR_SYNTAX",
                f"'\\{nxt}' is not an escape; use \\\\, \\', \\\", \\n, \\t or \\uXXXX",
            )
    return "".join(out)


def _depth(ast: dict[str, Any]) -> int:
    children = ast.get("args") or ast.get("items") or []
    return 1 + max((_depth(child) for child in children), default=0)


def _check_depth(source: str, ast: dict[str, Any], tree: Tree[Token]) -> None:
    depth = _depth(ast)
    if depth > MAX_DEPTH:
        raise _error(
            source,
            tree.meta.line if hasattr(tree, "meta") else 1,
            tree.meta.column if hasattr(tree, "meta") else 1,
            "EXPR_TOO_DEEP",
            f"the expression nests {depth} levels deep; the limit is {MAX_DEPTH}. "
            "Flatten it, or split it over several conditions",
        )


def _paths(ast: dict[str, Any]) -> list[str]:
    if ast["type"] == "var":
        return [ast["path"]]
    return [p for child in ast.get("args") or ast.get("items") or [] for p in _paths(child)]


def _check_dereferences(source: str, ast: dict[str, Any]) -> None:
    count = sum(path.count(".") for path in _paths(ast))
    if count > MAX_DEREFERENCES:
        raise _error(
            source,
            1,
            1,
            "EXPR_TOO_MANY_DEREFERENCES",
            f"the expression follows {count} field references (a.b counts one); the "
            f"limit is {MAX_DEREFERENCES}",
        )


_STRINGS = re.compile(r""""([^"\\]|\\.)*"|'([^'\\]|\\.)*'""")
_FORBIDDEN = [
    (
        re.compile(r"\+"),
        "string concatenation and arithmetic are not allowed; compare values instead",
    ),
    (
        re.compile(r"=~|(?<![.\w])(matches|like)\b"),
        "regular expressions and patterns are not allowed; use == or contains",
    ),
    (
        re.compile(r"(?<![.\w])(for|while)\b"),
        "loops are not allowed; conditions test values, they do not iterate",
    ),
]


def _syntax_error(source: str, exc: UnexpectedInput) -> ExpressionError:
    line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    # A forbidden construct anywhere (outside string literals) explains the error best.
    unquoted = _STRINGS.sub(lambda m: " " * len(m.group(0)), source)
    for pattern, message in _FORBIDDEN:
        found = pattern.search(unquoted)
        if found:
            before = source[: found.start()]
            found_line = before.count("\n") + 1
            found_column = found.start() - (before.rfind("\n") + 1) + 1
            return _error(source, found_line, found_column, "EXPR_FORBIDDEN", message)
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        lines = source.rstrip().split("\n")
        return _error(
            source,
            len(lines),
            len(lines[-1]) + 1,
            "EXPR_SYNTAX",
            "the expression ends too early (an operand or a closing bracket is missing)",
        )
    at = _offset(source, line, column)
    rest = source[at:]
    if (
        isinstance(exc, UnexpectedToken)
        and exc.token.type == "LPAR"
        and at > 0
        and (source[:at].rstrip()[-1:].isalnum())
    ):
        return _error(source, line, column, "EXPR_FORBIDDEN", "function calls are not allowed")
    if isinstance(exc, UnexpectedCharacters):
        shown = rest[:1]
        if shown in ("=", "&", "|"):
            hint = "use ==, &&, || (doubled)"
        else:
            hint = "use literals, paths like entity.total, and == != > >= < <= in contains && || !"
        return _error(source, line, column, "EXPR_SYNTAX", f"unexpected '{shown}'; {hint}")
    shown_token = str(exc.token) if isinstance(exc, UnexpectedToken) else rest[:1]
    expected = sorted(getattr(exc, "expected", set()) or [])
    wanted = ", ".join(_pretty(name) for name in expected[:6])
    return _error(
        source,
        line,
        column,
        "EXPR_SYNTAX",
        f"unexpected '{shown_token}'" + (f"; expected {wanted}" if wanted else ""),
    )


def _pretty(terminal: str) -> str:
    names = {
        "RPAR": "')'",
        "RSQB": "']'",
        "COMMA": "','",
        "COMPARATOR": "a comparison",
        "NAME": "a name",
        "NUMBER": "a number",
        "STRING": "a string",
        "LPAR": "'('",
        "LSQB": "'['",
        "AND": "'&&'",
        "OR": "'||'",
        "BANG": "'!'",
        "NOW": "now",
        "TRUE": "true",
        "FALSE": "false",
        "NULL": "null",
        "__ANON_0": "'||'",
        "__ANON_1": "'&&'",
    }
    return names.get(terminal, terminal.lower())


def _offset(source: str, line: int, column: int) -> int:
    lines = source.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + column - 1


def _error(source: str, line: int, column: int, code: str, message: str) -> ExpressionError:
    text = source.split("\n")[line - 1] if source else ""
    pointer = " " * max(column - 1, 0) + "^"
    error = ExpressionError(
        f"{message} (line {line}, column {column})\n  {text}\n  {pointer}", code=code
    )
    error.line, error.column = line, column
    return error


def to_json(compiled: dict[str, Any]) -> str:
    return json.dumps(compiled, separators=(",", ":"), ensure_ascii=False)
