"""Each node type's configuration, declared once as data.

``NODE_TYPES`` says which settings a node type takes, of what kind, which are required and
what they must look like. From it:

- ``charter.compiler.nodes`` validates and compiles an org's node configurations;
- ``json_schema()`` exports a JSON Schema per node type, of the configuration as written
  (expressions are strings; for forms) and as compiled (expressions are ``{"expression",
  "ast"}`` objects, defaults filled in; what an effective workflow stores);
- ``sql()`` makes src/charter/db/sql/functions/0594_node_config_schemas.sql, the compiled
  schemas as the IMMUTABLE function ``charter._node_config_schemas()``, which
  ``charter._node_config_problem`` (0597) checks every user node against at publish.

Patterns are written so that Python's ``re``, PostgreSQL's ``~`` and JSON Schema's ECMA
regular expressions read them alike: ``^`` and ``$`` anchors, ``[0-9]`` for digits, no flags.

Regenerate the SQL after a change here (tests/compiler/test_node_schemas.py fails until then)::

    python tools/gen_node_schema_sql.py
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from charter.vocabulary import NotificationChannel

Kind = Literal[
    "text", "choice", "expression", "payload", "template", "duration", "headers", "approvers"
]

NON_BLANK = r"\S"
# A positive ISO 8601 duration: some digit other than 0, and at least one part after P.
DURATION = (
    r"^(?=.*[1-9])P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?"
    r"(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$"
)
ACTION_TYPE = r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$"
CONTEXT_VARIABLE = r"^context\.[a-z_][a-z0-9_]*$"
HTTP_URL = r"^https?://"
# Headers charter sets on every webhook itself (any case), and its own x-charter-*.
CHARTER_HEADERS = ("content-type", "content-length", "idempotency-key", "host")


def _any_case(text: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in text)


HEADER_NAME = (
    "^(?!("
    + "|".join(_any_case(h) for h in CHARTER_HEADERS)
    + ")$|"
    + _any_case("x-charter-")
    + ")"
)
APPROVER_KINDS = ("user", "role", "rule", "managerOf")


def matches(pattern: str, value: str) -> bool:
    """Whether ``value`` matches ``pattern`` as PostgreSQL's ``~`` and JSON Schema read it: a
    search, where ``$`` is the end of the text (in Python it also matches before a final
    newline, hence ``\\Z``)."""
    return re.search(pattern.replace("$", r"\Z"), value) is not None


@dataclass(frozen=True)
class Setting:
    """One setting of a node type.

    ``pattern`` (with ``mismatch``, the message when it does not match, formatted with
    ``{key}`` and ``{value!r}``) applies to text and template settings; ``options`` and
    ``default`` to choices; ``boolean`` to expressions that decide (a condition)."""

    kind: Kind
    required: bool = False
    options: tuple[str, ...] = ()
    default: str | None = None
    pattern: str | None = None
    mismatch: str = ""
    boolean: bool = False


@dataclass(frozen=True)
class NodeType:
    """The settings of a node type. ``variants``: a choice setting whose value selects the
    settings that apply (an approval's ``mode``); ``exactly_one``: settings of which a
    configuration names exactly one (a timer's ``duration`` or ``until``)."""

    settings: dict[str, Setting]
    variants: tuple[str, dict[str, dict[str, Setting]]] | None = None
    exactly_one: tuple[str, ...] = ()
    exactly_one_message: str = ""

    def forms(self) -> list[dict[str, Setting]]:
        """Each set of settings a configuration may have (one unless there are variants)."""
        if self.variants is None:
            return [self.settings]
        key, by_value = self.variants
        return [
            {key: Setting("choice", options=(value,), default=self.settings[key].default),
             **{k: s for k, s in self.settings.items() if k != key}, **extra}
            for value, extra in by_value.items()
        ]  # fmt: skip


_ESCALATE = Setting("duration")
NODE_TYPES: dict[str, NodeType] = {
    "action": NodeType({
        "actionType": Setting(
            "text", required=True, pattern=ACTION_TYPE,
            mismatch="{key} {value!r} must look like 'invoice.reserve_inventory'"),
        "payloadTemplate": Setting("payload"),
        "runAs": Setting("choice", options=("actor", "system", "service_account"), default="actor"),
    }),
    "approval": NodeType(
        {"mode": Setting("choice", options=("inline", "chain"), default="inline")},
        variants=("mode", {
            "inline": {
                "approvers": Setting("approvers", required=True),
                "decision": Setting("choice", options=("any", "all"), default="any"),
                "escalateAfter": _ESCALATE,
            },
            "chain": {"chainId": Setting("text", required=True), "escalateAfter": _ESCALATE},
        }),
    ),
    "condition": NodeType({"expression": Setting("expression", required=True, boolean=True)}),
    "script": NodeType({
        "expression": Setting("expression", required=True),
        "assignTo": Setting("text", pattern=CONTEXT_VARIABLE,
                            mismatch="{key} {value!r} must name a context variable, e.g. "
                                     "'context.approval_count'"),
    }),
    "wait_timer": NodeType(
        {"duration": Setting("duration"), "until": Setting("expression")},
        exactly_one=("duration", "until"),
        exactly_one_message="a wait_timer needs exactly one of duration (e.g. PT24H) or until "
        "(an expression giving a time)",
    ),
    "wait_event": NodeType({
        "eventKey": Setting("template", required=True),
        "timeout": Setting("duration"),
    }),
    "webhook_out": NodeType({
        "url": Setting("template", required=True, pattern=HTTP_URL,
                       mismatch="{key} {value!r} must start with https:// (or http://)"),
        "method": Setting("choice", options=("POST", "PUT", "PATCH"), default="POST"),
        "payloadTemplate": Setting("payload"),
        "headers": Setting("headers"),
    }),
    "notification": NodeType({
        "channel": Setting(
            "choice", options=tuple(NotificationChannel), default=NotificationChannel.EMAIL
        ),
        "to": Setting("template", required=True),
        "subject": Setting("template"),
        "body": Setting("template", required=True),
    }),
    "parallel_split": NodeType({}),
    "parallel_join": NodeType({"mode": Setting("choice", options=("all", "any"), default="all")}),
    "rule": NodeType({"ruleId": Setting("text", required=True)}),
}  # fmt: skip


def _compiled_in_output(setting: Setting) -> bool:
    """Whether a compiled configuration always has the setting (a default fills it in)."""
    return setting.required or setting.kind in ("choice", "payload", "headers")


_EXPRESSION_SOURCE = {"type": "string", "pattern": NON_BLANK}
_EXPRESSION_COMPILED = {
    "type": "object",
    "required": ["expression", "ast"],
    "properties": {
        "expression": {"type": "string"},
        # What an AST may be is charter.expr's to say (and charter._ast_problem's in SQL).
        "ast": {"description": "the expression's AST, as charter.expr.compile_expression makes it"},
    },
    "additionalProperties": False,
}


def _setting_schema(setting: Setting, compiled: bool) -> dict[str, Any]:
    expression = _EXPRESSION_COMPILED if compiled else _EXPRESSION_SOURCE
    if setting.kind == "text":
        return {"type": "string", "pattern": setting.pattern or NON_BLANK}
    if setting.kind == "choice":
        out: dict[str, Any] = {"type": "string", "enum": list(setting.options)}
        if not compiled and setting.default is not None:
            out["default"] = setting.default
        return out
    if setting.kind == "expression":
        return dict(expression)
    if setting.kind == "payload":
        return {"type": "object", "additionalProperties": expression}
    if setting.kind == "template":
        return {"type": "string", **({"pattern": setting.pattern} if setting.pattern else {})}
    if setting.kind == "duration":
        return {"type": "string", "pattern": DURATION}
    if setting.kind == "headers":
        return {
            "type": "object",
            "propertyNames": {"pattern": HEADER_NAME},
            "additionalProperties": {"type": "string"},
        }
    # approvers: each one of {"user": id}, {"role": name}, {"rule": expression},
    # {"managerOf": "requester"}
    return {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "properties": {
                "user": {"type": "string", "minLength": 1},
                "role": {"type": "string", "minLength": 1},
                "rule": expression,
                "managerOf": {"type": "string", "enum": ["requester"]},
            },
            "additionalProperties": False,
        },
    }


def _form_schema(settings: dict[str, Setting], compiled: bool) -> dict[str, Any]:
    required = [
        k for k, s in settings.items() if (_compiled_in_output(s) if compiled else s.required)
    ]
    out: dict[str, Any] = {
        "type": "object",
        "properties": {k: _setting_schema(s, compiled) for k, s in settings.items()},
        "additionalProperties": False,
    }
    if required:
        out["required"] = required
    return out


def node_schema(node_type: str, *, compiled: bool = False) -> dict[str, Any]:
    """The JSON Schema of a node type's configuration, as written or as compiled."""
    spec = NODE_TYPES[node_type]
    forms = spec.forms()
    if len(forms) == 1:
        out = _form_schema(forms[0], compiled)
    else:
        variants = [_form_schema(f, compiled) for f in forms]
        if not compiled and spec.variants is not None:
            # As written, the variant key may be left out for its default.
            key = spec.variants[0]
            for variant, form in zip(variants, forms, strict=True):
                if form[key].options[0] != form[key].default:
                    variant["required"] = [key, *variant.get("required", [])]
        out = {"type": "object", "oneOf": variants}
    if spec.exactly_one:
        out["oneOf"] = [{"required": [k]} for k in spec.exactly_one]
    return {"title": f"{node_type} node configuration", **out}


def json_schema(*, compiled: bool = False) -> dict[str, dict[str, Any]]:
    """node type → the JSON Schema of its configuration (``compiled``: after compilation)."""
    return {t: node_schema(t, compiled=compiled) for t in NODE_TYPES}


SQL_FILE = Path(__file__).parents[1] / "db" / "sql" / "functions" / "0594_node_config_schemas.sql"


def sql() -> str:
    """The text of functions/0594_node_config_schemas.sql."""
    schemas = json.dumps(json_schema(compiled=True), sort_keys=True, indent=1)
    assert "$schemas$" not in schemas
    return (
        "-- GENERATED from charter.compiler.node_schemas: do not edit by hand. Regenerate with\n"
        "--   python tools/gen_node_schema_sql.py\n"
        "-- The JSON Schema of each user node type's compiled configuration (node type -> "
        "schema),\n"
        "-- which charter._node_config_problem checks at publish (charter._verify_effective).\n"
        "CREATE OR REPLACE FUNCTION charter._node_config_schemas()\n"
        "RETURNS jsonb\n"
        "LANGUAGE sql\n"
        "IMMUTABLE\n"
        "PARALLEL SAFE\n"
        "SET search_path = ''\n"
        "AS $fn$\n"
        f"    SELECT $schemas${schemas}$schemas$::jsonb\n"
        "$fn$;\n"
    )
