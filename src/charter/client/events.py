# Generated from events_async.py by tools/async_to_sync.py; do not edit.
# Edit events_async.py and run: python tools/async_to_sync.py
"""The events face of the client."""

from __future__ import annotations

from typing import Any

from charter.client.events_async import AsyncEvents as AsyncEvents
from charter.db.store import Connection, Store
from charter.ops import events as events_ops
from charter.ops.events import SentEvent


class Events:
    """External events, keyed (``payment:ORD-7``, ``delivery:pod:SHIP-1``), that resume the
    ``wait_event`` nodes of documents' workflow instances and the ``@flow.wait_event`` steps
    of flow runs waiting on the key."""

    def __init__(self, store: Store, org_id: str) -> None:
        self._store, self._org = (store, org_id)

    def send(
        self,
        key: str,
        payload: Any = None,
        event_id: str | None = None,
        *,
        document_id: str | None = None,
        connection: Connection | None = None,
    ) -> SentEvent:
        """Resume the instances and flow steps waiting on ``key`` with ``payload``; with none
        waiting the event is kept (7 days) for the first wait on its key. Sending the same
        ``event_id`` again changes nothing (status ``duplicate``).

        ``document_id`` names the document the event is for: only that document's waits take
        it (now or kept), never another's on the same key — an amendment's, say, when the
        event was for the original. Without it, a kept event is not taken by an amendment
        made after it was sent."""
        op = events_ops.send_event(self._org, key, payload, event_id, document_id)
        return self._store.perform(op, connection)
