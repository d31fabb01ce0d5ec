"""Python actions of document workflows: ``@charter.action("royalty.generate_statement")``.

An ``action`` node whose action type the contract does not declare runs a Python handler
registered under that type, in a ``charter worker`` given the handler's module: at least
once, with the node's idempotency key, on the document version the instance was at when
the node started. The handler returns a field patch (or None); the engine applies it
through ``mutate()`` in the completion transaction, as the node's ``runAs`` actor::

    @charter.action("royalty.generate_statement")
    def generate(document: dict, ctx: charter.ActionContext) -> dict:
        return {"statement_total": document["data"]["sales"] * 0.05}
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from charter.errors import ArgumentError

ACTION_TYPE = re.compile(r"\A[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\Z")

ActionHandler = Callable[..., "dict[str, Any] | Awaitable[dict[str, Any] | None] | None"]

_REGISTRY: dict[str, ActionHandler] = {}


@dataclass(frozen=True)
class ActionContext:
    """What an action handler knows about its call."""

    action_type: str
    run_id: str  # the document's workflow instance
    node_id: str
    document_id: str
    org_id: str  # the document's org
    entity_version: int  # the version the handler sees (pinned when the node started)
    payload: dict[str, Any]  # the node's payloadTemplate, evaluated
    idempotency_key: str  # the same on every attempt: pass it to the systems you call
    attempt: int
    logger: logging.Logger


def action(action_type: str) -> Callable[[ActionHandler], ActionHandler]:
    """Register the decorated function as the handler of ``action_type`` (``entity.verb``)."""
    if not isinstance(action_type, str) or not ACTION_TYPE.match(action_type):
        raise ArgumentError(
            f"{action_type!r} is not an action type: use entity_type.verb in lower case, e.g. "
            "'royalty_period.generate_statement'."
        )

    def register(handler: ActionHandler) -> ActionHandler:
        if not callable(handler):
            raise ArgumentError(f"@charter.action({action_type!r}) decorates a function")
        existing = _REGISTRY.get(action_type)
        if existing is not None and existing is not handler:
            raise ArgumentError(
                f"Action {action_type!r} already has a handler ({existing.__module__}."
                f"{existing.__qualname__}); one action type, one handler."
            )
        _REGISTRY[action_type] = handler
        return handler

    return register


def registered_actions() -> dict[str, ActionHandler]:
    """Every handler registered so far (by the modules imported), by action type."""
    return dict(_REGISTRY)
