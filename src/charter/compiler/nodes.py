"""Node configuration: every node type of the seed's canon enum, validated at compile time.

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

from charter.errors import ContractError, ExpressionError
from charter.expr.compile import Schema, compile_expression
from charter.payloads import shown
from charter.vocabulary import NotificationChannel

# \Z, not $: "$" also matches before a trailing newline.
DURATION = re.compile(r"\AP(?!\Z)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?\Z")
ACTION_TYPE = re.compile(r"\A[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\Z")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def compile_node_config(
    node_id: str, node_type: str, config: dict[str, Any], schema: Schema
) -> dict[str, Any]:
    """The configuration with its expressions compiled, or ContractError(NODE_CONFIG_INVALID)."""
    check = _CHECKS.get(node_type)
    if check is None:
        if config:
            _fail(node_id, f"a {node_type} node takes no configuration, got {sorted(config)}")
        return {}
    return check(_Config(node_id, node_type, config, schema))


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
            _fail(self.node_id, f"{key} must be a non-empty string")
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        value = self.config.get(key, default)
        if value not in options:
            _fail(self.node_id, f"{key}={shown(value)} is not one of {', '.join(options)}")
        return str(value)

    def expression(self, key: str, source: Any, *, boolean: bool = False) -> dict[str, Any]:
        if not isinstance(source, str):
            _fail(self.node_id, f"{key} must be an expression string")
        try:
            return compile_expression(source, self.schema, boolean=boolean)
        except ExpressionError as exc:
            raise ContractError(
                f"Node {self.node_id}: {key}: {exc.message}", code="NODE_CONFIG_INVALID"
            ) from exc

    def payload(self, key: str) -> dict[str, Any]:
        """``payloadTemplate``: field or body key → expression, the same in every node type
        (seed 002's MutationSpecRef). ``{…}`` text templates are for text settings only."""
        payload = self.config.get(key, {})
        if not isinstance(payload, dict):
            _fail(
                self.node_id,
                f"{key} must map names to expressions, e.g. "
                '{"total": "entity.grand_total", "kind": "\'invoice\'"}',
            )
        return {k: self._payload_value(f"{key}.{k}", v) for k, v in sorted(payload.items())}

    def _payload_value(self, key: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, str):
            _fail(
                self.node_id,
                f"{key} is {shown(value)}, not an expression: write the value as an expression "
                'string (a number as "5", text quoted as "\'text\'", a field as '
                '"entity.total")',
            )
        try:
            return compile_expression(value, self.schema)
        except ExpressionError as exc:
            if PLACEHOLDER.search(value) is None:
                raise ContractError(
                    f"Node {self.node_id}: {key}: {exc.message}", code="NODE_CONFIG_INVALID"
                ) from exc
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
        )
        return {}

    def template(self, key: str, value: Any) -> str:
        if not isinstance(value, str):
            _fail(self.node_id, f"{key} must be a string template")
        if value.count("{") != value.count("}"):
            _fail(self.node_id, f"{key} has unbalanced braces: {value!r}")
        for placeholder in PLACEHOLDER.findall(value):
            try:
                compiled = compile_expression(placeholder.strip(), self.schema)
            except ExpressionError as exc:
                raise ContractError(
                    f"Node {self.node_id}: {key}: the placeholder {{{placeholder}}} is not a "
                    f"variable path: {exc.message.splitlines()[0]}",
                    code="NODE_CONFIG_INVALID",
                ) from None
            if compiled["ast"]["type"] != "var":
                _fail(
                    self.node_id,
                    f"{key}: the placeholder {{{placeholder}}} must be a path "
                    "like {entity.shipment_id}",
                )
        return str(value)

    def duration(self, key: str, *, required: bool = True) -> str | None:
        value = self.config.get(key)
        if value is None and not required:
            return None
        if (
            not isinstance(value, str)
            or not DURATION.match(value)
            or not re.search(r"[1-9]", value)
        ):
            _fail(
                self.node_id,
                f"{key}={shown(value)} is not a positive ISO 8601 duration such as PT24H, P3D "
                "or PT90M",
            )
        return value


def _fail(node_id: str, message: str) -> None:
    raise ContractError(f"Node {node_id}: {message}.", code="NODE_CONFIG_INVALID")


def _action(c: _Config) -> dict[str, Any]:
    c.only("actionType", "payloadTemplate", "runAs")
    action_type = c.text("actionType")
    assert action_type is not None
    if not ACTION_TYPE.match(action_type):
        _fail(c.node_id, f"actionType {action_type!r} must look like 'invoice.reserve_inventory'")
    return {
        "actionType": action_type,
        "payloadTemplate": c.payload("payloadTemplate"),
        "runAs": c.choice("runAs", ("actor", "system", "service_account"), "actor"),
    }


def _approval(c: _Config) -> dict[str, Any]:
    mode = c.choice("mode", ("inline", "chain"), "inline")
    escalation = {}
    if c.config.get("escalateAfter") is not None:
        escalation = {"escalateAfter": c.duration("escalateAfter")}
    if mode == "chain":
        c.only("mode", "chainId", "escalateAfter")
        return {"mode": "chain", "chainId": c.text("chainId"), **escalation}
    c.only("mode", "approvers", "decision", "escalateAfter")
    approvers = c.config.get("approvers")
    if not isinstance(approvers, list) or not approvers:
        _fail(
            c.node_id,
            "an inline approval needs a non-empty approvers list, e.g. "
            '[{"role": "finance_manager"}]',
        )
    compiled: list[dict[str, Any]] = []
    assert isinstance(approvers, list)
    for n, approver in enumerate(approvers):
        if (
            not isinstance(approver, dict)
            or len(approver) != 1
            or next(iter(approver)) not in ("user", "role", "rule", "managerOf")
        ):
            _fail(
                c.node_id,
                f'approvers[{n}] must be one of {{"user": id}}, {{"role": name}}, '
                '{"rule": expression} or {"managerOf": "requester"}',
            )
        kind, value = next(iter(approver.items()))
        if kind == "rule":
            compiled.append({"rule": c.expression(f"approvers[{n}].rule", value)})
        elif kind == "managerOf" and value != "requester":
            _fail(c.node_id, f'approvers[{n}].managerOf must be "requester", not {shown(value)}')
        elif not isinstance(value, str) or not value:
            _fail(c.node_id, f"approvers[{n}].{kind} must be a non-empty string")
        else:
            compiled.append({kind: value})
    return {
        "mode": "inline",
        "approvers": compiled,
        "decision": c.choice("decision", ("any", "all"), "any"),
        **escalation,
    }


def _condition(c: _Config) -> dict[str, Any]:
    c.only("expression")
    expression = c.expression("expression", c.config.get("expression"), boolean=True)
    return {"expression": expression}


def _script(c: _Config) -> dict[str, Any]:
    c.only("expression", "assignTo")
    assign = c.text("assignTo", required=False)
    if assign is not None and not re.fullmatch(r"context\.[a-z_][a-z0-9_]*", assign):
        _fail(
            c.node_id,
            f"assignTo {assign!r} must name a context variable, e.g. 'context.approval_count'",
        )
    out: dict[str, Any] = {"expression": c.expression("expression", c.config.get("expression"))}
    if assign is not None:
        out["assignTo"] = assign
    return out


def _wait_timer(c: _Config) -> dict[str, Any]:
    c.only("duration", "until")
    has_duration, has_until = "duration" in c.config, "until" in c.config
    if has_duration == has_until:
        _fail(
            c.node_id,
            "a wait_timer needs exactly one of duration (e.g. PT24H) or until "
            "(an expression giving a time)",
        )
    if has_duration:
        return {"duration": c.duration("duration")}
    return {"until": c.expression("until", c.config.get("until"))}


def _wait_event(c: _Config) -> dict[str, Any]:
    c.only("eventKey", "timeout")
    out: dict[str, Any] = {"eventKey": c.template("eventKey", c.config.get("eventKey"))}
    timeout = c.duration("timeout", required=False)
    if timeout is not None:
        out["timeout"] = timeout
    return out


# Headers charter sets on every webhook itself.
_CHARTER_HEADERS = ("content-type", "content-length", "idempotency-key", "host")


def _webhook_out(c: _Config) -> dict[str, Any]:
    c.only("url", "method", "payloadTemplate", "headers")
    url = c.template("url", c.config.get("url"))
    if not re.match(r"^https?://", url):
        _fail(c.node_id, f"url {url!r} must start with https:// (or http://)")
    return {
        "url": url,
        "method": c.choice("method", ("POST", "PUT", "PATCH"), "POST"),
        "payloadTemplate": c.payload("payloadTemplate"),
        "headers": _headers(c),
    }


def _notification(c: _Config) -> dict[str, Any]:
    c.only("channel", "to", "subject", "body")
    channel = c.choice("channel", tuple(NotificationChannel), NotificationChannel.EMAIL)
    out = {
        "channel": channel,
        "to": c.template("to", c.config.get("to")),
        "body": c.template("body", c.config.get("body")),
    }
    if "subject" in c.config:
        out["subject"] = c.template("subject", c.config["subject"])
    return out


def _headers(c: _Config) -> dict[str, str]:
    """Header name → text template (``"Bearer {org.token}"``)."""
    headers = c.config.get("headers", {})
    if not isinstance(headers, dict):
        _fail(c.node_id, 'headers must map header names to text, e.g. {"X-Source": "charter"}')
    for name in headers:
        if str(name).lower() in _CHARTER_HEADERS or str(name).lower().startswith("x-charter-"):
            _fail(c.node_id, f"header {name!r} is set by charter; leave it out")
    return {k: c.template(f"headers.{k}", v) for k, v in sorted(headers.items())}


def _parallel_join(c: _Config) -> dict[str, Any]:
    c.only("mode")
    return {"mode": c.choice("mode", ("all", "any"), "all")}


def _rule(c: _Config) -> dict[str, Any]:
    c.only("ruleId")
    return {"ruleId": c.text("ruleId")}


_CHECKS: dict[str, Callable[[_Config], dict[str, Any]]] = {
    "action": _action,
    "approval": _approval,
    "condition": _condition,
    "script": _script,
    "wait_timer": _wait_timer,
    "wait_event": _wait_event,
    "webhook_out": _webhook_out,
    "notification": _notification,
    "parallel_join": _parallel_join,
    "rule": _rule,
}
