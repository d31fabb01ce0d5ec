"""The rules face of the client."""

from __future__ import annotations

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import rules as rules_ops
from charter.ops.rules import Rule


class AsyncRules:
    """The org's rule store: named, versioned expressions that ``rule`` nodes evaluate."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def put(
        self,
        rule_id: str,
        expression: str,
        description: str | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Rule:
        """Store a new version of the rule (unchanged when it equals the latest). A rule
        decides a rule node's true or false edge, so its expression must be able to be true
        or false (else EXPR_TYPE_MISMATCH)."""
        op = rules_ops.put_rule(self._org, rule_id, expression, description)
        return await self._store.perform(op, connection)

    async def get(
        self,
        rule_id: str,
        version: int | None = None,
        *,
        connection: AsyncConnection | None = None,
    ) -> Rule:
        return await self._store.perform(
            rules_ops.get_rule(self._org, rule_id, version), connection
        )
