"""The dead letters face of the client."""

from __future__ import annotations

import builtins
from typing import Any

from charter.db.store import AsyncStore
from charter.ops import dead_letters as dead_letters_ops
from charter.ops.side_effects import SideEffect


class AsyncDeadLetters:
    """Side effects out of attempts (or refused for good): look, re-drive, drop."""

    def __init__(self, store: AsyncStore, org_id: str) -> None:
        self._store, self._org = store, org_id

    async def list(
        self, *, limit: int = 100, run_id: str | None = None
    ) -> builtins.list[SideEffect]:
        """Newest first (``run_id``: that run's only); each with ``.id``, ``.channel``,
        ``.target``, ``.last_error``, ``.attempts``, ``.run_id``."""
        return await self._store.perform(
            dead_letters_ops.list_dead_letters(self._org, limit, run_id)
        )

    async def retry(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        """Send them again, with their idempotency keys and a fresh set of attempts. An id
        that is not a dead letter of the org is refused and nothing changes. A workflow's
        effect whose instance failed because of it (``DELIVERY_FAILED``) resumes that
        instance at its node: the node completes once the effect is delivered, and the
        instance goes on; ``actor`` is named in the instance's evidence and audit."""
        return await self._store.perform(dead_letters_ops.retry_dead_letters(self._org, ids, actor))

    async def drop(self, ids: Any, *, actor: str | None = None) -> builtins.list[int]:
        """Give up on them for good (kept as cancelled, with who dropped them)."""
        return await self._store.perform(dead_letters_ops.drop_dead_letters(self._org, ids, actor))
