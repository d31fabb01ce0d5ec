"""Node configuration: every node type of the seed's canon enum, validated at compile time.

Which settings a node type takes, and what they must look like, is declared once in
``charter.compiler.node_schemas`` (the same declaration exports the JSON Schemas and the
schema PostgreSQL checks at publish); this module walks it, with the messages that say how
to fix a configuration.

Expressions inside a configuration (conditions, scripts, the payloads of actions and
webhooks, approver rules, timer deadlines) are compiled to their JSON AST here — a condition
must be able to be true or false —, and ``{entity.x}`` placeholders in text templates (event
keys, webhook urls and headers, notification texts) are checked as paths, so the engine never
meets an expression that was not checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from charter.compiler.node_schemas import (
    APPROVER_KINDS,
    DURATION,
    HEADER_NAME,
    NODE_TYPES,
    Kind,
    NodeType,
    Setting,
    matches,
)
from charter.errors import ContractError, ExpressionError
from charter.expr.compile import Schema, compile_expression
from charter.payloads import shown

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def compile_node_config(
    node_id: str, node_type: str, config: dict[str, Any], schema: Schema
) -> dict[str, Any]:
    """The configuration with its expressions compiled, or ContractError(NODE_CONFIG_INVALID)."""
    spec = NODE_TYPES.get(node_type)
    if spec is None or not spec.settings:
        if config:
            _fail(node_id, f"a {node_type} node takes no configuration, got {sorted(config)}")
        return {}
    return _compile(_Config(node_id, node_type, config, schema), spec)


class _Config:
    def __init__(
        self, node_id: str, node_type: str, config: dict[str, Any], schema: Schema
    ) -> None:
        self.node_id, self.type, self.config, self.schema = node_id, node_type, config, schema

    def only(self, *allowed: str) -> None:
        extra = sorted(set(self.config) - set(allowed))
        if extra:
            _fail(
                self.node_id,
                f"unknown setting(s) {', '.join(extra)} for a {self.type} "
                f"node (allowed: {', '.join(allowed)})",
            )

    def text(self, key: str, *, required: bool = True) -> str | None:
        value = self.config.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            _fail(self.node_id, f"{key} must be a non-empty string", key)
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        value = self.config.get(key, default)
        if value not in options:
            _fail(self.node_id, f"{key}={shown(value)} is not one of {', '.join(options)}", key)
        return str(value)

    def expression(self, key: str, source: Any, *, boolean: bool = False) -> dict[str, Any]:
        if not isinstance(source, str):
            _fail(self.node_id, f"{key} must be an expression string", key)
        try:
            return compile_expression(source, self.schema, boolean=boolean)
        except ExpressionError as exc:
            raise _expression_failed(self.node_id, key, exc) from exc

    def payload(self, key: str) -> dict[str, Any]:
        """``payloadTemplate``: field or body key → expression, the same in every node type
        (seed 002's MutationSpecRef). ``{…}`` text templates are for text settings only."""
        payload = self.config.get(key, {})
        if not isinstance(payload, dict):
            _fail(
                self.node_id,
                f"{key} must map names to expressions, e.g. "
                '{"total": "entity.grand_total", "kind": "\'invoice\'"}',
                key,
            )
        return {k: self._payload_value(f"{key}.{k}", v) for k, v in sorted(payload.items())}

    def _payload_value(self, key: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, str):
            _fail(
                self.node_id,
                f"{key} is {shown(value)}, not an expression: write the value as an expression "
                'string (a number as "5", text quoted as "\'text\'", a field as '
                '"entity.total")',
                key,
            )
        try:
            return compile_expression(value, self.schema)
        except ExpressionError as exc:
            if PLACEHOLDER.search(value) is None:
                raise _expression_failed(self.node_id, key, exc) from exc
        # A {…} text template, as webhook payloads once were (and "entity.ref" went out as
        # the literal text): say what to write instead.
        single = re.fullmatch(r"\s*\{([^{}]*)\}\s*", value)
        fix = (
            f"write {single.group(1).strip()!r} for the value itself"
            if single
            else "send each value under a key of its own (expressions do not join text)"
        )
        _fail(
            self.node_id,
            f"{key} is the text template {value!r}, but payload values are expressions: {fix} "
            "({…} templates are for text settings: url, headers, subject, body)",
            key,
        )
        return {}

    def template(self, key: str, value: Any) -> str:
        if not isinstance(value, str):
            _fail(self.node_id, f"{key} must be a string template", key)
        if value.count("{") != value.count("}"):
            _fail(self.node_id, f"{key} has unbalanced braces: {value!r}", key)
        for placeholder in PLACEHOLDER.findall(value):
            try:
                compiled = compile_expression(placeholder.strip(), self.schema)
            except ExpressionError as exc:
                raise ContractError(
                    f"Node {self.node_id}: {key}: the placeholder {{{placeholder}}} is not a "
                    f"variable path: {exc.message.splitlines()[0]}",
                    code="NODE_CONFIG_INVALID",
                    node_id=self.node_id,
                    path=f"config.{key}",
                ) from None
            if compiled["ast"]["type"] != "var":
                _fail(
                    self.node_id,
                    f"{key}: the placeholder {{{placeholder}}} must be a path "
                    "like {entity.shipment_id}",
                    key,
                )
        return str(value)

    def duration(self, key: str, *, required: bool = True) -> str | None:
        value = self.config.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not matches(DURATION, value):
            _fail(
                self.node_id,
                f"{key}={shown(value)} is not a positive ISO 8601 duration such as PT24H, P3D "
                "or PT90M",
                key,
            )
        return value


def _fail(node_id: str, message: str, key: str | None = None) -> None:
    raise ContractError(
        f"Node {node_id}: {message}.",
        code="NODE_CONFIG_INVALID",
        node_id=node_id,
        path=None if key is None else f"config.{key}",
    )


def _expression_failed(node_id: str, key: str, exc: ExpressionError) -> ContractError:
    return ContractError(
        f"Node {node_id}: {key}: {exc.message}",
        code="NODE_CONFIG_INVALID",
        node_id=node_id,
        path=f"config.{key}",
        line=exc.line,
        caret=exc.column - 1,
    )


def _compile(c: _Config, spec: NodeType) -> dict[str, Any]:
    """The configuration compiled setting by setting, as ``spec`` declares them."""
    settings = spec.settings
    if spec.variants is not None:
        key, by_value = spec.variants
        choice = settings[key]
        assert choice.default is not None
        value = c.choice(key, tuple(by_value), choice.default)
        settings = {**settings, **by_value[value]}
    c.only(*settings)
    if spec.exactly_one and sum(k in c.config for k in spec.exactly_one) != 1:
        _fail(c.node_id, spec.exactly_one_message)
    out: dict[str, Any] = {}
    for key, setting in settings.items():
        value = _SETTINGS[setting.kind](c, key, setting)
        if value is not None:
            out[key] = value
    return out


def _text(c: _Config, key: str, setting: Setting) -> str | None:
    value = c.text(key, required=setting.required)
    if value is not None and setting.pattern and not matches(setting.pattern, value):
        _fail(c.node_id, setting.mismatch.format(key=key, value=value), key)
    return value


def _choice(c: _Config, key: str, setting: Setting) -> str:
    assert setting.default is not None
    return c.choice(key, setting.options, setting.default)


def _expression(c: _Config, key: str, setting: Setting) -> dict[str, Any] | None:
    if key not in c.config and not setting.required:
        return None
    return c.expression(key, c.config.get(key), boolean=setting.boolean)


def _template(c: _Config, key: str, setting: Setting) -> str | None:
    if key not in c.config and not setting.required:
        return None
    value = c.template(key, c.config.get(key))
    if setting.pattern and not matches(setting.pattern, value):
        _fail(c.node_id, setting.mismatch.format(key=key, value=value), key)
    return value


def _duration(c: _Config, key: str, setting: Setting) -> str | None:
    return c.duration(key, required=setting.required)


def _payload(c: _Config, key: str, setting: Setting) -> dict[str, Any]:
    return c.payload(key)


def _headers(c: _Config, key: str, setting: Setting) -> dict[str, str]:
    """Header name → text template (``"Bearer {org.token}"``)."""
    headers = c.config.get(key, {})
    if not isinstance(headers, dict):
        _fail(
            c.node_id, f'{key} must map header names to text, e.g. {{"X-Source": "charter"}}', key
        )
    for name in headers:
        if not matches(HEADER_NAME, str(name)):
            _fail(c.node_id, f"header {name!r} is set by charter; leave it out", f"{key}.{name}")
    return {k: c.template(f"{key}.{k}", v) for k, v in sorted(headers.items())}


def _approvers(c: _Config, key: str, setting: Setting) -> list[dict[str, Any]]:
    approvers = c.config.get(key)
    if not isinstance(approvers, list) or not approvers:
        _fail(
            c.node_id,
            f"an inline approval needs a non-empty {key} list, e.g. "
            '[{"role": "finance_manager"}]',
            key,
        )
    compiled: list[dict[str, Any]] = []
    assert isinstance(approvers, list)
    for n, approver in enumerate(approvers):
        if (
            not isinstance(approver, dict)
            or len(approver) != 1
            or next(iter(approver)) not in APPROVER_KINDS
        ):
            _fail(
                c.node_id,
                f'{key}[{n}] must be one of {{"user": id}}, {{"role": name}}, '
                '{"rule": expression} or {"managerOf": "requester"}',
                f"{key}[{n}]",
            )
        kind, value = next(iter(approver.items()))
        if kind == "rule":
            compiled.append({"rule": c.expression(f"{key}[{n}].rule", value)})
        elif kind == "managerOf" and value != "requester":
            _fail(
                c.node_id,
                f'{key}[{n}].managerOf must be "requester", not {shown(value)}',
                f"{key}[{n}]",
            )
        elif not isinstance(value, str) or not value:
            _fail(c.node_id, f"{key}[{n}].{kind} must be a non-empty string", f"{key}[{n}]")
        else:
            compiled.append({kind: value})
    return compiled


_SETTINGS: dict[Kind, Callable[[_Config, str, Setting], Any]] = {
    "text": _text,
    "choice": _choice,
    "expression": _expression,
    "template": _template,
    "duration": _duration,
    "payload": _payload,
    "headers": _headers,
    "approvers": _approvers,
}
