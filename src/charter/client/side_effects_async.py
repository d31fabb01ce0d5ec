"""The side effects face of the client."""

from __future__ import annotations

from typing import Any

from charter.db.store import AsyncConnection, AsyncStore
from charter.ops import side_effects as side_effects_ops
from charter.ops.side_effects import QueuedWebhook, SideEffect


class AsyncSideEffects:
    """The side-effects outbox: webhooks from the app, and what receivers need to trust
    charter (the signing secret)."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def webhook(
        self,
        url: str,
        body: Any = None,
        *,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        max_attempts: int = 8,
        connection: AsyncConnection | None = None,
    ) -> QueuedWebhook:
        """Queue a webhook: delivered by the worker like a workflow's (signed, keyed, retried,
        dead-lettered). Pass ``connection=`` to queue it in your own transaction (it goes
        out only if that commits); the same ``idempotency_key`` twice is one webhook."""
        op = side_effects_ops.enqueue_webhook(
            self._org,
            url,
            body,
            method=method,
            headers=headers,
            idempotency_key=idempotency_key,
            max_attempts=max_attempts,
        )
        return await self._store.perform(op, connection)

    async def get(
        self, effect_id: int, *, connection: AsyncConnection | None = None
    ) -> SideEffect | None:
        """One effect or task: status, attempts, last error, request and response."""
        return await self._store.perform(
            side_effects_ops.get_side_effect(self._org, effect_id), connection
        )

    async def webhook_secret(self, *, connection: AsyncConnection | None = None) -> str:
        """The org's key for the ``X-Charter-Signature`` header: HMAC-SHA256 of the request
        body, hex, prefixed ``sha256=`` (made on first use; keep it with the receiver)."""
        return await self._store.perform(side_effects_ops.webhook_secret(self._org), connection)
