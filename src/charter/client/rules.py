# Generated from rules_async.py by tools/async_to_sync.py; do not edit.
# Edit rules_async.py and run: python tools/async_to_sync.py
"""The rules face of the client."""

from __future__ import annotations

from charter.client.rules_async import AsyncRules as AsyncRules
from charter.db.store import Connection, Store
from charter.ops import rules as rules_ops
from charter.ops.rules import Rule


class Rules:
    """The org's rule store: named, versioned expressions that ``rule`` nodes evaluate."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

    def put(
        self,
        rule_id: str,
        expression: str,
        description: str | None = None,
        *,
        connection: Connection | None = None,
    ) -> Rule:
        """Store a new version of the rule (unchanged when it equals the latest). A rule
        decides a rule node's true or false edge, so its expression must be able to be true
        or false (else EXPR_TYPE_MISMATCH)."""
        op = rules_ops.put_rule(self._org, rule_id, expression, description)
        return self._store.perform(op, connection)

    def get(
        self, rule_id: str, version: int | None = None, *, connection: Connection | None = None
    ) -> Rule:
        return self._store.perform(rules_ops.get_rule(self._org, rule_id, version), connection)
